//! Generated clients, not hand-written ones: the Python client generated
//! from the served `/v1/openapi.json` by `openapi-python-client` takes a
//! broker through `clients/python/broker_journey.py` against the real
//! binary (ping, webhook endpoint, group, census, quote, enrollment,
//! elections, account; every delivery verified with `standardwebhooks`).
//!
//! `.ci/run` installs the generator under `<target>/sdk/python` and the
//! verifier under `<target>/webhook-verifiers/python`; without them the
//! test is skipped with a note, except under CI.

use std::path::Path;
use std::process::Command;

use crate::common::api::call;
use crate::common::scratch;
use crate::common::serve_process::ServeDemo;
use crate::common::webdriver::{target_dir, under_ci};

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

#[test]
fn a_broker_completes_the_journey_with_the_generated_python_client() {
    let generator = target_dir().join("sdk/python");
    let verifier = target_dir().join("webhook-verifiers/python");
    for (what, dir, package) in [
        ("openapi-python-client", &generator, "openapi_python_client"),
        ("standardwebhooks", &verifier, "standardwebhooks"),
    ] {
        if !dir.join(package).exists() {
            assert!(
                !under_ci(),
                "{what} is not installed under {} and CI is set: .ci/run installs it",
                dir.display()
            );
            eprintln!(
                "NOTE: {what} not installed under {}: the generated client's journey is skipped",
                dir.display()
            );
            return;
        }
    }
    let dir = scratch("sdk_python");
    let url = format!("sqlite://{}", dir.join("partner-api.sqlite").display());
    let server = ServeDemo::new(&dir, &url)
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
