# Generates the price-on-plan benchmark request: the criterion bench's
# census (10,000 employees, 12 ZIPs, xorshift seed 0x2545F4914F6CDD1D) and
# its 500 market plans, as one JSON body.
import json, sys
M = (1 << 64) - 1
x = 0x2545F4914F6CDD1D
def nxt(m):
    global x
    x ^= (x << 13) & M; x ^= x >> 7; x ^= (x << 17) & M
    return x % m
ZIPS = ["94103","94110","10001","60601","77002","30301","98101","02108","80202","85001","19103","55401"]
n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
census = []
for i in range(n):
    year = 1960 + nxt(45); day = 1 + nxt(28)
    zip_ = ZIPS[nxt(12)]
    m = {"external_id": f"E-{i:05}", "first_name": "F", "last_name": "L", "dob": f"{year}-06-{day:02}", "zip": zip_}
    kind = nxt(100)
    dep = lambda rel, y: {"relationship": rel, "dob": f"{1960 + y}-03-04"}
    if kind < 20: pass
    elif kind < 60: m["dependents"] = []
    elif kind < 72: m["dependents"] = [dep("spouse", nxt(45))]
    elif kind < 84: m["dependents"] = [dep("child", 40 + nxt(25)) for _ in range(nxt(3) + 1)]
    else:
        d = [dep("spouse", nxt(45))]; d += [dep("child", 40 + nxt(25)) for _ in range(nxt(3) + 1)]
        m["dependents"] = d
    census.append(m)
plans = []
for i in range(500):
    k = i % 5
    if k == 0: p = {"carrier": f"C{i}", "planName": f"Platinum {i}", "planType": "PPO", "metalTier": "Platinum", "pmpmCents": 90000 + i * 37}
    elif k == 1: p = {"carrier": f"C{i}", "planName": f"HSA {i}", "planType": "PPO", "metalTier": "Bronze", "hsaEligible": True, "deductibleIndividualCents": 340000, "oopMaxIndividualCents": 750000 + (i % 7) * 10000, "monthlyRatesCents": {"employeeOnly": 50000 + i, "employeeSpouse": 100000 + i, "employeeChildren": 90000 + i, "family": 150000 + i}}
    elif k == 2: p = {"carrier": f"C{i}", "planName": f"HMO {i}", "planType": "HMO", "metalTier": "Gold", "pmpmCents": 70000}
    elif k == 3: p = {"carrier": f"C{i}", "planName": f"Silver {i}", "planType": "PPO", "metalTier": "Silver", "hsaEligible": False, "pmpmCents": 60000}
    else: p = {"carrier": f"C{i}", "planName": f"Gold {i}", "planType": "EPO", "metalTier": "Gold"}
    if i < 5: p["memberRatesCents"] = [{"externalId": m["external_id"], "monthlyCents": 95000} for m in census]
    plans.append(p)
plan = {"carrier": "Acme Health", "plan_name": "Silver PPO HSA 3400", "plan_type": "PPO", "hsa_eligible": True,
        "deductible_individual_cents": 340000, "oop_max_individual_cents": 750000,
        "member_rates_cents": [{"external_id": m["external_id"], "monthly_cents": 52000 + (i % 50) * 100} for i, m in enumerate(census)],
        "pmpm_cents": 52000}
json.dump({"census": census, "plan": plan, "market_plans": plans, "company": {"name": "Bench Co", "zip": "94103", "state": "CA"}}, sys.stdout)
