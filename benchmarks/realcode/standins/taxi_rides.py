"""Stand-in data for training-data-analyst's taxifare trainer packages: taxi-train.csv and taxi-valid.csv without a
header, in the columns the trainers read (fare_amount, pickuplon, pickuplat, dropofflon, dropofflat, passengers,
key), a few hundred rows of made-up rides."""
import random

random.seed(0)
for name, rows in (("taxi-train.csv", 512), ("taxi-valid.csv", 128)):
    with open(name, "w") as out:
        for index in range(rows):
            pickup = (-74.0 + random.uniform(-0.1, 0.1), 40.7 + random.uniform(-0.1, 0.1))
            dropoff = (pickup[0] + random.uniform(-0.05, 0.05), pickup[1] + random.uniform(-0.05, 0.05))
            distance = abs(pickup[0] - dropoff[0]) + abs(pickup[1] - dropoff[1])
            fare = round(2.5 + 100 * distance + random.uniform(0, 2), 2)
            out.write(f"{fare},{pickup[0]:.5f},{pickup[1]:.5f},{dropoff[0]:.5f},{dropoff[1]:.5f},"
                      f"{random.randint(1, 4)},{name}-{index}\n")
