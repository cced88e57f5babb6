//! Generated clients, not hand-written ones, against the real binary:
//! - the Python client generated from `/v1/openapi.json` by
//!   `openapi-python-client` takes a broker through
//!   `clients/python/broker_journey.py` (ping, webhook endpoint, group,
//!   census, quote, enrollment, elections, account; every delivery
//!   verified with `standardwebhooks`);
//! - the TypeScript types generated from `/v1/openapi.json?style=camel` by
//!   `openapi-typescript`, called through `openapi-fetch` and compiled with
//!   `tsc --strict`, take an HR platform through
//!   `clients/typescript/hr_journey.ts` (price-on-plan on its own plan and
//!   on market plans alone, each from 202 to its answer; a quote; an
//!   embedded enrollment; events by type).
//!
//! `.ci/run` installs the generators under `<target>/sdk/python` and
//! `<target>/sdk/node`, and the verifier under
//! `<target>/webhook-verifiers/python`; without them a test is skipped
//! with a note, except under CI. The server is the binary named by
//! `PARTNER_API_TEST_BIN`: `cargo xtask ci` runs these tests on their own
//! against the release build (the one a partner runs); without the variable
//! they use the test build's binary, except under CI, where that fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::api::call;
use crate::common::scratch;
use crate::common::serve_process::ServeDemo;
use crate::common::webdriver::{target_dir, under_ci};

/// The binary the journeys run: `PARTNER_API_TEST_BIN` (the release build
/// under CI), else the test build's.
fn binary() -> PathBuf {
    match std::env::var_os("PARTNER_API_TEST_BIN") {
        Some(path) => PathBuf::from(path),
        None => {
            assert!(
                !under_ci(),
                "PARTNER_API_TEST_BIN is not set and CI is set: `cargo xtask ci` runs the journeys against the release binary"
            );
            PathBuf::from(crate::common::BIN)
        }
    }
}

/// Runs `cmd`, requiring success; its stdout.
fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Whether every `(what, dir, entry)` is installed (`dir/entry` exists);
/// a note when one is not, a failure under CI.
fn installed(tools: &[(&str, &Path, &str)]) -> bool {
    for (what, dir, entry) in tools {
        if !dir.join(entry).exists() {
            assert!(
                !under_ci(),
                "{what} is not installed under {} and CI is set: .ci/run installs it",
                dir.display()
            );
            eprintln!(
                "NOTE: {what} not installed under {}: the generated client's journey is skipped",
                dir.display()
            );
            return false;
        }
    }
    true
}

#[test]
fn a_broker_completes_the_journey_with_the_generated_python_client() {
    let generator = target_dir().join("sdk/python");
    let verifier = target_dir().join("webhook-verifiers/python");
    if !installed(&[
        ("openapi-python-client", &generator, "openapi_python_client"),
        ("standardwebhooks", &verifier, "standardwebhooks"),
    ]) {
        return;
    }
    let dir = scratch("sdk_python");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    let bin = binary();
    let server = ServeDemo::new(&dir, &url)
        .binary(&bin)
        .without_inherited_config()
        .env("PARTNER_API_WEBHOOKS__ALLOW_INSECURE_ENDPOINTS", "true")
        .log("serve")
        .start();
    let key = server.demo_key();

    // The client is generated from the document this server serves.
    let (status, document) = call(&server, &key, "GET", "/v1/openapi.json", None);
    assert_eq!(status, 200);
    let spec = dir.join("openapi.json");
    std::fs::write(&spec, document.to_string()).unwrap();
    let client = dir.join("client");
    run(
        "openapi-python-client generate",
        Command::new("python3")
            .args(["-m", "openapi_python_client", "generate", "--overwrite"])
            .arg("--path")
            .arg(&spec)
            .arg("--output-path")
            .arg(&client)
            .env("PYTHONPATH", &generator),
    );
    assert!(
        client
            .join("partner_benefits_pricing_and_enrollment_api_client/api/groups/create_group.py")
            .exists(),
        "the generated client has no create_group"
    );

    let journey =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients/python/broker_journey.py");
    let path = std::env::join_paths([&client, &generator, &verifier]).unwrap();
    let said = run(
        "the broker's journey",
        Command::new("python3")
            .arg(&journey)
            .arg(format!("http://{}", server.addr))
            .arg(&key)
            .env("PYTHONPATH", path),
    );
    assert!(said.trim_end().ends_with("journey: ok"), "{said}");
    for step in [
        "create enrollment: 201",
        "submit elections: 200",
        "get account: 200",
    ] {
        assert!(said.contains(step), "{step} missing:\n{said}");
    }
    assert!(
        said.contains("webhook enrollment.created verified"),
        "{said}"
    );
}

#[test]
fn an_hr_platform_completes_the_journey_with_the_generated_typescript_client() {
    let node = target_dir().join("sdk/node/node_modules");
    if !installed(&[
        ("openapi-typescript", &node, "openapi-typescript/bin/cli.js"),
        ("openapi-fetch", &node, "openapi-fetch/package.json"),
        ("typescript", &node, "typescript/bin/tsc"),
        ("@types/node", &node, "@types/node/package.json"),
    ]) {
        return;
    }
    let dir = scratch("sdk_typescript");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    // Pricing answers 202 at once, so the journey polls.
    let bin = binary();
    let server = ServeDemo::new(&dir, &url)
        .binary(&bin)
        .without_inherited_config()
        .env("PARTNER_API_PRICING__WAIT_BUDGET_MS", "0")
        .log("serve")
        .start();
    let operator = |args: &[&str]| {
        let mut cmd = Command::new(&bin);
        cmd.env("PARTNER_API_DATABASE_URL", &url)
            .env("PARTNER_API_LOG", "warn")
            .current_dir(&dir)
            .args(args);
        run(&format!("partner-api {args:?}"), &mut cmd)
            .trim()
            .to_owned()
    };
    let partner = operator(&[
        "partner",
        "create",
        "--name",
        "Payroll Co",
        "--kind",
        "hr_platform",
    ]);
    let key = operator(&["key", "create", "--partner", &partner, "--mode", "test"]);
    assert!(key.starts_with("psk_test_"), "{key}");

    // Types from the camelCase document this server serves.
    let (status, document) = call(&server, &key, "GET", "/v1/openapi.json?style=camel", None);
    assert_eq!(status, 200);
    let spec = dir.join("openapi.json");
    std::fs::write(&spec, document.to_string()).unwrap();
    let build = dir.join("journey");
    std::fs::create_dir_all(&build).unwrap();
    run(
        "openapi-typescript",
        Command::new("node")
            .arg(node.join("openapi-typescript/bin/cli.js"))
            .arg(&spec)
            .arg("--output")
            .arg(build.join("schema.d.ts")),
    );
    let journey =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients/typescript/hr_journey.ts");
    std::fs::copy(&journey, build.join("hr_journey.ts")).unwrap();
    std::os::unix::fs::symlink(&node, build.join("node_modules")).unwrap();
    std::fs::write(
        build.join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true, "target": "es2022", "module": "commonjs",
            "moduleResolution": "node", "esModuleInterop": true, "outDir": "out",
            "types": ["node"]}, "files": ["hr_journey.ts"]}"#,
    )
    .unwrap();
    run(
        "tsc --strict",
        Command::new("node")
            .arg(node.join("typescript/bin/tsc"))
            .arg("-p")
            .arg(&build),
    );
    let said = run(
        "the HR platform's journey",
        Command::new("node")
            .arg(build.join("out/hr_journey.js"))
            .arg(format!("http://{}", server.addr))
            .arg(&key)
            .current_dir(&build),
    );
    assert!(said.trim_end().ends_with("journey: ok"), "{said}");
    for step in [
        "price on own plan: polled to ready",
        "price on market plans: polled to ready",
        "create enrollment (embedded): 201",
        "events by type: 200",
    ] {
        assert!(said.contains(step), "{step} missing:\n{said}");
    }
}
