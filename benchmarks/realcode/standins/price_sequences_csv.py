"""Stand-in data for training-data-analyst's gcp_forecasting trainer: train.csv and eval.csv, each row a sequence of
10 weekly median prices joined by ";" (the feature `med_sales_price_agg`), then the next week's price (the label),
without a header."""
import random

random.seed(0)
for name, rows in (("train.csv", 256), ("eval.csv", 64)):
    with open(name, "w") as out:
        for _ in range(rows):
            price, trend = random.uniform(0.5, 1.5), random.uniform(-0.02, 0.02)
            prices = [price * (1 + trend) ** week + random.uniform(-0.01, 0.01) for week in range(11)]
            out.write(";".join(f"{value:.4f}" for value in prices[:10]) + f",{prices[10]:.4f}\n")
