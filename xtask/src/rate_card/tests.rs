//! End-to-end test of the generator on a small hand-written data folder.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use flate2::Compression;
use flate2::write::GzEncoder;

use crate::rate_card::age_curve::tests::{curve_yaml, default_curve_yaml};
use crate::rate_card::{build, files, render, write};

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "xtask-{label}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        if path.exists() {
            fs::remove_dir_all(&path).unwrap();
        }
        fs::create_dir_all(&path).unwrap();
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const PRIMARY_COUNTY: &str = "\
ZCTA5,Primary County,Primary County Subdivision,Primary Place,Primary Urban Area,Population,Housing Units,Land Area,Water Area,Latitude,Longitude
00901,72127,,,,20000,9000,1.0,0.0,18.4,-66.1
10001,36061,,,,20000,9000,0.6,0.0,40.75,-73.99
32401,12005,,,,1000,500,10.0,1.0,30.1,-85.6
32456,12045,,,,5000,2500,200.0,10.0,29.8,-85.3
57770,46102,,,,4000,1200,300.0,0.0,43.1,-102.5
84101,49035,,,,6000,4000,2.0,0.0,40.75,-111.9
88001,35013,,,,100,50,20.0,0.0,32.3,-106.7
88002,35035,,,,100,50,40.0,0.0,32.4,-106.5
90012,06037,,,,40000,15000,3.0,0.0,34.06,-118.24
94103,06075,,,,30000,20000,1.4,0.0,37.77,-122.41
94104,06075,,,,500,300,0.1,0.0,37.79,-122.40
99501,02020,,,,15000,8000,7.0,0.5,61.2,-149.9
";

const COUNTY_FIPS: &str = "\
,state,county_name,county_fips
0,AK,Anchorage Municipality,02020
1,CA,Los Angeles County,06037
2,CA,San Francisco County,06075
3,FL,Bay County,12005
4,FL,Gulf County,12045
5,NM,Doña Ana County,35013
6,NM,Otero County,35035
7,NY,New York County,36061
8,SD,Oglala Lakota County,46102
9,SD,Pennington County,46103
10,UT,Salt Lake County,49035
11,PR,San Juan Municipio,72127
";

/// PolicyEngine's table, with CRLF endings. Its CA and AK entries are wrong on
/// purpose: those states must come from the CMS tables.
const PE_COUNTY_AREAS: &str = "county,rating_area\r\n\
SAN_FRANCISCO_COUNTY_CA,9\r\n\
LOS_ANGELES_COUNTY_CA,9\r\n\
ANCHORAGE_MUNICIPALITY_AK,3\r\n\
BAY_COUNTY_FL,5\r\n\
GULF_COUNTY_FL,22\r\n\
DONA_ANA_NM,3\r\n\
OTERO_COUNTY_NM,5\r\n\
NEW_YORK_COUNTY_NY,4\r\n\
PENNINGTON_COUNTY_SD,1\r\n\
SALT_LAKE_COUNTY_UT,1\r\n\
SAN_JUAN_MUNICIPIO_PR,1\r\n";

/// 2014 CMS county table: FIPS without leading zeros, blank areas for ZIP3
/// counties, and Oglala Lakota under its old code (Shannon, 46113).
const CMS_COUNTY_AREAS: &str = "\
statefip,state,countyfip,county,ratingarea
2,Alaska,2020,Anchorage,
6,California,6037,Los Angeles,
6,California,6075,San Francisco,4
46,South Dakota,46113,Shannon,1
";

/// 2014 CMS ZIP3 table; its LA row disagrees with the LA table on purpose.
const CMS_ZIP3_AREAS: &str = "\
statefip,state,ratingarea,zip3
2,Alaska,1,995
6,California,16,900
";

const LA_ZIP3_AREAS: &str = "\
description: Los Angeles County assigns three-digit ZIP codes to these rating areas.
metadata:
  period: year
  label: Los Angeles County ACA rating areas by three-digit ZIP code

900:
  2014-01-01: 15
906:
  2014-01-01: 15
";

/// Silver levels; FL area 22 has no 2026 value.
const SLCSP: &str = "\
description: Second Lowest Cost Silver Plan (SLCSP) premiums by rating area, normalized to age 0.
metadata:

  period: month
  breakdown:
     - state_code
     - range(1, 68) #max rating areas +1
AK:
  1:
    2025-01-01: 606.00
    2026-01-01: 613.00
CA:
  4:
    2026-01-01: 436.00
  15:
    2026-01-01: 312.00
FL:
  5:
    2026-01-01: 500.00
  22:
    2025-01-01: 450.00
NM:
  3:
    2026-01-01: 412.00
  5:
    2026-01-01: 401.50
NY:
  4:
    2026-01-01: 867.00
SD:
  1:
    2026-01-01: 423.00
UT:
  1:
    2026-01-01: 300.00
";

const LCBP: &str = "\
description: Lowest Cost Bronze Plan (LCBP) premiums by rating area, normalized to age 0.
metadata:
  period: month
AK:
  1:
    2026-01-01: 507.00
CA:
  4:
    2026-01-01: 441.00
  15:
    2026-01-01: 250.00
FL:
  5:
    2026-01-01: 400.00
NM:
  3:
    2026-01-01: 428.00
  5:
    2026-01-01: 300.00
NY:
  4:
    2026-01-01: 647.00
SD:
  1:
    2026-01-01: 417.00
UT:
  1:
    2026-01-01: 250.00
";

fn gzip(text: &str) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(text.as_bytes()).unwrap();
    encoder.finish().unwrap()
}

fn write_fixture(dir: &Path) {
    fs::write(dir.join(files::PRIMARY_COUNTY), PRIMARY_COUNTY).unwrap();
    fs::write(dir.join(files::COUNTY_FIPS), gzip(COUNTY_FIPS)).unwrap();
    fs::write(dir.join(files::PE_COUNTY_AREAS), PE_COUNTY_AREAS).unwrap();
    fs::write(dir.join(files::CMS_COUNTY_AREAS), CMS_COUNTY_AREAS).unwrap();
    fs::write(dir.join(files::CMS_ZIP3_AREAS), CMS_ZIP3_AREAS).unwrap();
    fs::write(dir.join(files::LA_ZIP3_AREAS), LA_ZIP3_AREAS).unwrap();
    fs::write(dir.join(files::SLCSP), SLCSP).unwrap();
    fs::write(dir.join(files::LCBP), LCBP).unwrap();
    fs::write(dir.join("pe_age_curve_default.yaml"), default_curve_yaml()).unwrap();
    // Utah: age 0 = 1.0, 21 = 1.25, 40 = 2.0, 64 = 3.75, so milli 800 / 1000
    // / 1600 / 3000.
    let utah = curve_yaml(&[(0, "1.0"), (21, "1.25"), (40, "2.0"), (64, "3.75")]);
    fs::write(dir.join("pe_age_curve_ut.yaml"), utah).unwrap();
}

fn int(table: &toml::Table, path: &[&str]) -> i64 {
    let (last, parents) = path.split_last().unwrap();
    let mut table = table;
    for key in parents {
        table = table[*key].as_table().unwrap();
    }
    table[*last].as_integer().unwrap()
}

fn ints(value: &toml::Value) -> Vec<i64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_integer().unwrap())
        .collect()
}

fn strings(value: &toml::Value) -> Vec<&str> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

#[test]
fn generates_the_fixture_card_exactly() {
    let dir = TempDir::new("rate-card");
    let data = dir.0.join("data");
    fs::create_dir_all(&data).unwrap();
    write_fixture(&data);
    let out = dir.0.join("cards/2026.toml");

    let summary = write(&data, &out).unwrap();
    let text = fs::read_to_string(&out).unwrap();
    assert_eq!(summary.bytes, text.len());
    assert!(text.starts_with("# Generated by `cargo xtask rate-card`"));
    // Deterministic: a second build renders the same bytes.
    assert_eq!(render::render(&build(&data).unwrap()).unwrap(), text);

    let card: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(int(&card, &["format"]), 1);
    assert_eq!(card["version"].as_str(), Some("2026.1"));
    assert_eq!(int(&card, &["plan_year"]), 2026);

    let layers = card["layers"].as_table().unwrap();
    let default = layers["default"].as_table().unwrap();
    let curve = ints(&default["age_curve_milli"]);
    assert_eq!(curve.len(), 65);
    assert_eq!(
        (curve[0], curve[14], curve[15], curve[21], curve[64]),
        (765, 765, 833, 1000, 3000)
    );
    assert_eq!(default["claims"]["zero_probability"].as_float(), Some(0.15));
    assert_eq!(
        int(
            &card,
            &["layers", "default", "versions", "diamond", "risk_margin_bp"]
        ),
        1000
    );

    let mut utah = vec![800; 21];
    utah.extend([1000; 19]);
    utah.extend([1600; 24]);
    utah.push(3000);
    assert_eq!(ints(&layers["state:UT"]["age_curve_milli"]), utah);

    // (area, benchmark, market base), hand-computed:
    // AK-01: 61300×1035×1000/(721×765) = 115028.15 → 115028; 50700×1000/765 = 66274.51 → 66275
    // CA-04: 43600 → 81814.47 → 81814; 44100 → 57647.06 → 57647
    // CA-15: 31200 → 58546.14 → 58546; 25000 → 32679.74 → 32680
    // FL-05: 50000 → 93823.94 → 93824; 40000 → 52287.58 → 52288
    // NM-03: 41200 → 77310.92 → 77311; 42800 → 55947.71 → 55948
    // NM-05: 40150 → 75340.62 → 75341; 30000 → 39215.69 → 39216
    // NY-04 (adult base rate): 86700×1035/721 = 124458.39 → 124458; 64700
    // SD-01: 42300 → 79375.05 → 79375; 41700 → 54509.80 → 54510
    // UT-01 (milli0 800): 30000×1035×1000/(721×800) = 53831.48 → 53831; 25000×1000/800 = 31250
    let expected = [
        ("AK-01", 115_028, 66_275),
        ("CA-04", 81_814, 57_647),
        ("CA-15", 58_546, 32_680),
        ("FL-05", 93_824, 52_288),
        ("NM-03", 77_311, 55_948),
        ("NM-05", 75_341, 39_216),
        ("NY-04", 124_458, 64_700),
        ("SD-01", 79_375, 54_510),
        ("UT-01", 53_831, 31_250),
    ];
    let areas: Vec<(String, i64, i64)> = layers
        .iter()
        .filter_map(|(name, layer)| {
            let id = name.strip_prefix("area:")?;
            let layer = layer.as_table().unwrap();
            Some((
                id.to_owned(),
                layer["benchmark_rate21_cents"].as_integer().unwrap(),
                layer["market_base_rate21_cents"].as_integer().unwrap(),
            ))
        })
        .collect();
    let expected: Vec<(String, i64, i64)> = expected
        .iter()
        .map(|(id, b, m)| ((*id).to_owned(), *b, *m))
        .collect();
    assert_eq!(areas, expected);
    let state_layers: Vec<&String> = layers.keys().filter(|k| k.starts_with("state:")).collect();
    assert_eq!(state_layers, ["state:UT"]);

    // Every mapped ZCTA is listed, FL-22 included although it has no levels;
    // the PR ZCTA has no area.
    let zip_areas = card["zip_areas"].as_table().unwrap();
    let listed: Vec<(&str, Vec<&str>)> = zip_areas
        .iter()
        .map(|(id, zips)| (id.as_str(), strings(zips)))
        .collect();
    assert_eq!(
        listed,
        [
            ("AK-01", vec!["99501"]),
            ("CA-04", vec!["94103", "94104"]),
            ("CA-15", vec!["90012"]),
            ("FL-05", vec!["32401"]),
            ("FL-22", vec!["32456"]),
            ("NM-03", vec!["88001"]),
            ("NM-05", vec!["88002"]),
            ("NY-04", vec!["10001"]),
            ("SD-01", vec!["57770"]),
            ("UT-01", vec!["84101"]),
        ]
    );

    // 880 is a population tie (NM-03 wins on id); 324 falls mostly in the
    // unpriced FL-22, so it gets no fallback.
    let zip3: Vec<(&str, &str)> = card["zip3_areas"]
        .as_table()
        .unwrap()
        .iter()
        .map(|(prefix, id)| (prefix.as_str(), id.as_str().unwrap()))
        .collect();
    assert_eq!(
        zip3,
        [
            ("100", "NY-04"),
            ("577", "SD-01"),
            ("841", "UT-01"),
            ("880", "NM-03"),
            ("900", "CA-15"),
            ("941", "CA-04"),
            ("995", "AK-01"),
        ]
    );

    let meta = card["meta"].as_table().unwrap();
    assert_eq!(
        meta["coverage"].as_str(),
        Some("11 ZCTAs mapped to 10 areas; 9 areas priced; 7 ZIP3 fallbacks")
    );
    assert_eq!(strings(&meta["sources"]).len(), 10);
    assert!(!text.contains(&*dir.0.to_string_lossy()));
}

#[test]
fn missing_inputs_are_reported() {
    let dir = TempDir::new("rate-card-missing");
    let err = build(&dir.0).unwrap_err();
    assert!(format!("{err:#}").contains("pe_age_curve_default.yaml"));
}
