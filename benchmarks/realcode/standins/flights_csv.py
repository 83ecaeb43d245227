"""Stand-in data for data-science-on-gcp's flights notebooks: flights/train.csv and flights/test.csv as its
chapter-8 files hold them, no header, the columns ontime, dep_delay, taxiout, distance, avg_dep_delay, avg_arr_delay, carrier, dep_lat,
dep_lon, arr_lat, arr_lon, origin, dest; a few hundred made-up flights."""
import os
import random

CARRIERS = "AS,VX,F9,UA,US,WN,HA,EV,MQ,DL,OO,B6,NK,AA".split(",")
AIRPORTS = {"DAL": (32.84722, -96.85167), "MAF": (31.9425, -102.20194), "IAH": (29.984444, -95.34139),
            "LRD": (27.544167, -99.46167), "SEA": (47.45, -122.31), "JFK": (40.64, -73.78)}
random.seed(0)
os.makedirs("flights", exist_ok=True)
for part, rows in (("train", 400), ("test", 200)):
    with open(f"flights/{part}.csv", "w", encoding="utf-8") as file:
        for _ in range(rows):
            origin, dest = random.sample(sorted(AIRPORTS), 2)
            dep_delay, taxiout = random.uniform(-10, 60), random.uniform(5, 40)
            ontime = 1.0 if dep_delay + taxiout / 4 < 15 else 0.0
            values = [ontime, dep_delay, taxiout, random.uniform(100, 2500), random.uniform(0, 40),
                      random.uniform(-5, 40), random.choice(CARRIERS), *AIRPORTS[origin], *AIRPORTS[dest], origin, dest]
            file.write(",".join(f"{v:.4f}" if isinstance(v, float) else v for v in values) + "\n")
