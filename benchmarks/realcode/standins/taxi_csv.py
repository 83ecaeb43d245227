"""Stand-in data for the taxi-fare programs of training-data-analyst: taxi-train.csv and taxi-valid.csv in the
columns the programs read (fare_amount first), a few hundred rows of made-up rides."""
import random

COLUMNS = "fare_amount,dayofweek,hourofday,pickuplon,pickuplat,dropofflon,dropofflat"
random.seed(0)
for name, rows in (("taxi-train.csv", 512), ("taxi-valid.csv", 128)):
    with open(name, "w") as out:
        out.write(COLUMNS + "\n")
        for _ in range(rows):
            pickup = (-74.0 + random.uniform(-0.1, 0.1), 40.7 + random.uniform(-0.1, 0.1))
            dropoff = (pickup[0] + random.uniform(-0.05, 0.05), pickup[1] + random.uniform(-0.05, 0.05))
            distance = abs(pickup[0] - dropoff[0]) + abs(pickup[1] - dropoff[1])
            fare = round(2.5 + 100 * distance + random.uniform(0, 2), 2)
            out.write(f"{fare},{random.randint(1, 7)},{random.randint(0, 23)},{pickup[0]:.5f},{pickup[1]:.5f},"
                      f"{dropoff[0]:.5f},{dropoff[1]:.5f}\n")
