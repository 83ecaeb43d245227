"""Stand-in data for cloudml-samples' census programs: adult.data.csv and adult.test.csv without a header, in the
layout of the UCI Adult census files they read (age, workclass, fnlwgt, education, education_num, marital_status,
occupation, relationship, race, gender, capital_gain, capital_loss, hours_per_week, native_country,
income_bracket), every field after ", " as in those files, so that the text values keep the leading space of
the programs' vocabularies and labels (' Private', ' <=50K'); a few hundred made-up people."""
import random

WORKCLASS = [" Private"] * 6 + [" Self-emp-not-inc", " Self-emp-inc", " Local-gov", " State-gov", " Federal-gov",
                                " ?", " Without-pay"]
EDUCATION = [(" Preschool", 1), (" 1st-4th", 2), (" 5th-6th", 3), (" 7th-8th", 4), (" 9th", 5), (" 10th", 6),
             (" 11th", 7), (" 12th", 8), (" HS-grad", 9), (" Some-college", 10), (" Assoc-voc", 11),
             (" Assoc-acdm", 12), (" Bachelors", 13), (" Masters", 14), (" Prof-school", 15), (" Doctorate", 16)]
MARITAL = [" Married-civ-spouse", " Divorced", " Married-spouse-absent", " Never-married", " Separated",
           " Married-AF-spouse", " Widowed"]
OCCUPATION = [" Tech-support", " Craft-repair", " Other-service", " Sales", " Exec-managerial", " Prof-specialty",
              " Handlers-cleaners", " Machine-op-inspct", " Adm-clerical", " Farming-fishing", " Transport-moving",
              " Priv-house-serv", " Protective-serv", " Armed-Forces", " ?"]
RACE = [" White"] * 6 + [" Black", " Asian-Pac-Islander", " Amer-Indian-Eskimo", " Other"]
COUNTRY = [" United-States"] * 8 + [" Mexico", " Philippines", " Germany", " Canada", " India", " ?"]
random.seed(0)
for name, rows in (("adult.data.csv", 512), ("adult.test.csv", 128)):
    with open(name, "w") as out:
        for _ in range(rows):
            age = random.randint(17, 80)
            education, education_num = random.choice(EDUCATION)
            married = random.choice(MARITAL)
            gender = random.choice([" Male", " Female"])
            if married.startswith(" Married") and random.random() < 0.8:
                relationship = " Husband" if gender == " Male" else " Wife"
            else:
                relationship = random.choice([" Not-in-family", " Own-child", " Unmarried", " Other-relative"])
            gain = random.choice([0] * 9 + [random.randint(1000, 20000)])
            loss = random.choice([0] * 12 + [random.randint(500, 2500)])
            hours = max(1, min(99, int(random.gauss(40, 10))))
            score = education_num / 16 + (age - 17) / 120 + hours / 200 + (gain > 0) + random.uniform(-0.4, 0.4)
            income = " >50K" if score > 1.1 else " <=50K"
            values = [age, random.choice(WORKCLASS), random.randint(20000, 800000), education, education_num, married,
                      random.choice(OCCUPATION), relationship, random.choice(RACE), gender, gain, loss, hours,
                      random.choice(COUNTRY), income]
            out.write(", ".join(str(value).strip() for value in values) + "\n")
