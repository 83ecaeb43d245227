"""Stand-in data for the taxi-fare notebooks of training-data-analyst that read taxi-train.csv and taxi-valid.csv in the
trainer packages' layout: no header, fare_amount, pickuplon, pickuplat, dropofflon, dropofflat, passengers, key (a
few hundred made-up rides, as standins/taxi_csv.py makes them)."""
import random

random.seed(0)
for part, rows in (("train", 512), ("valid", 128)):
    with open(f"taxi-{part}.csv", "w") as out:
        for index in range(rows):
            pickup = (-74.0 + random.uniform(-0.1, 0.1), 40.7 + random.uniform(-0.1, 0.1))
            dropoff = (pickup[0] + random.uniform(-0.05, 0.05), pickup[1] + random.uniform(-0.05, 0.05))
            fare = round(2.5 + 100 * (abs(pickup[0] - dropoff[0]) + abs(pickup[1] - dropoff[1])) + random.uniform(0, 2), 2)
            places = f"{pickup[0]:.5f},{pickup[1]:.5f},{dropoff[0]:.5f},{dropoff[1]:.5f}"
            out.write(f"{fare},{places},{random.randint(1, 4)},{part}-{index}\n")
