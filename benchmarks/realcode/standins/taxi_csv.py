"""Stand-in data for the taxi-fare programs of training-data-analyst, a few hundred rows of made-up rides in the two
layouts they read: taxi-train.csv, taxi-valid.csv and taxi-test.csv with a header (fare_amount, dayofweek,
hourofday, pickuplon, pickuplat, dropofflon, dropofflat: the notebooks), and taxi-rides-train.csv,
taxi-rides-valid.csv and taxi-rides-test.csv without one (fare_amount, pickuplon, pickuplat, dropofflon,
dropofflat, passengers, key: the trainer packages)."""
import random

COLUMNS = "fare_amount,dayofweek,hourofday,pickuplon,pickuplat,dropofflon,dropofflat"
random.seed(0)
for part, rows in (("train", 512), ("valid", 128), ("test", 64)):
    with open(f"taxi-{part}.csv", "w") as notebook, open(f"taxi-rides-{part}.csv", "w") as trainer:
        notebook.write(COLUMNS + "\n")
        for index in range(rows):
            pickup = (-74.0 + random.uniform(-0.1, 0.1), 40.7 + random.uniform(-0.1, 0.1))
            dropoff = (pickup[0] + random.uniform(-0.05, 0.05), pickup[1] + random.uniform(-0.05, 0.05))
            distance = abs(pickup[0] - dropoff[0]) + abs(pickup[1] - dropoff[1])
            fare = round(2.5 + 100 * distance + random.uniform(0, 2), 2)
            places = f"{pickup[0]:.5f},{pickup[1]:.5f},{dropoff[0]:.5f},{dropoff[1]:.5f}"
            notebook.write(f"{fare},{random.randint(1, 7)},{random.randint(0, 23)},{places}\n")
            trainer.write(f"{fare},{places},{random.randint(1, 4)},{part}-{index}\n")
