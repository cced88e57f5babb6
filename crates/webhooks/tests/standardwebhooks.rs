//! Deliveries signed by this crate verify with the reference Standard
//! Webhooks libraries: the Python `standardwebhooks` package (1.1.0) and the
//! npm `standardwebhooks` package (1.1.1), each run through a small script
//! beside this file (`verify_standardwebhooks.py`, `verify_standardwebhooks.mjs`;
//! their interface is described at their top).
//!
//! Those libraries check the timestamp against the real clock, so these
//! tests sign with the current time. When an interpreter or its package is
//! missing, a test prints `skipped: …` and passes, unless `CI` is set: then
//! it fails (`.ci/run` installs both).

#![expect(
    clippy::unwrap_used,
    reason = "test code fails loudly on a broken expectation"
)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use webhooks::{Secret, sign};

/// One independent verifier: an interpreter and its script.
struct Reference {
    /// `python3` or `node`.
    program: &'static str,
    /// The script's file name, in this directory.
    script: &'static str,
    /// How to install the package, for the skip message.
    install: &'static str,
}

const PYTHON: Reference = Reference {
    program: "python3",
    script: "verify_standardwebhooks.py",
    install: "pip3 install standardwebhooks==1.1.0",
};

const NODE: Reference = Reference {
    program: "node",
    script: "verify_standardwebhooks.mjs",
    install: "npm install --prefix target/webhook-verifiers/node standardwebhooks@1.1.1",
};

/// Where the body reaches the script.
#[derive(Clone, Copy)]
enum BodyFrom {
    File,
    Stdin,
}

impl Reference {
    fn script_path(&self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests")
            .join(self.script)
    }

    /// Whether the interpreter and its package are there; when they are
    /// not, says so, and panics under CI.
    fn available(&self) -> bool {
        let problem = match Command::new(self.program)
            .arg(self.script_path())
            .arg("--check")
            .output()
        {
            Ok(out) if out.status.success() => {
                println!(
                    "{} {}: {}",
                    self.program,
                    self.script,
                    String::from_utf8_lossy(&out.stdout).trim()
                );
                return true;
            }
            Ok(out) => format!(
                "{} {} --check exited with {} ({}); install with `{}`",
                self.program,
                self.script,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                self.install
            ),
            Err(e) => format!("cannot run {}: {e}", self.program),
        };
        let under_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(!under_ci, "CI is set, so this must run: {problem}");
        // Straight to stderr, past the test harness's capture, so that the
        // skip shows in an ordinary `cargo test` run.
        let _ = writeln!(std::io::stderr(), "skipped: {problem}");
        false
    }

    /// Runs the script on one delivery: `Ok` when it verifies, `Err` with
    /// the library's message when it does not.
    fn verify(
        &self,
        secret: &str,
        id: &str,
        timestamp: &str,
        signature: &str,
        body: &[u8],
        from: BodyFrom,
    ) -> Result<(), String> {
        let mut command = Command::new(self.program);
        command
            .arg(self.script_path())
            .args([secret, id, timestamp, signature]);
        let out: Output = match from {
            BodyFrom::File => {
                let mut file = tempfile::NamedTempFile::new().unwrap();
                file.write_all(body).unwrap();
                file.flush().unwrap();
                command.arg(file.path()).output().unwrap()
            }
            BodyFrom::Stdin => {
                let mut child = command
                    .arg("-")
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child.stdin.take().unwrap().write_all(body).unwrap();
                child.wait_with_output().unwrap()
            }
        };
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_owned();
        match out.status.code() {
            Some(0) => Ok(()),
            Some(1) => Err(stderr),
            other => panic!("{} exited with {other:?}: {stderr}", self.script),
        }
    }
}

fn now() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs(),
    )
    .unwrap()
}

/// Signs deliveries with this crate and checks that `reference` accepts
/// them, and refuses altered ones.
fn check_against(reference: &Reference) {
    if !reference.available() {
        return;
    }
    let ours = Secret::from_random_bytes(std::array::from_fn(|i| {
        u8::try_from(i).unwrap().wrapping_mul(37) ^ 0x5c
    }));
    let vector = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
    let other = Secret::from_random_bytes([0x42; 32]);
    let id = "evt_0f3c9a1e5b7d4c2a8e6f1b3d5a7c9e0f";
    let body = r#"{"createdAt":"2026-01-02T03:04:05Z","data":{"name":"Café Ünïcode ✓"},"id":"evt_0f3c9a1e5b7d4c2a8e6f1b3d5a7c9e0f","mode":"test","type":"ping"}"#.as_bytes();
    let timestamp = now();
    let ts = timestamp.to_string();

    for (secret, from) in [(&ours, BodyFrom::File), (&vector, BodyFrom::Stdin)] {
        let signature = sign(secret, id, timestamp, body);
        assert_eq!(
            reference.verify(secret.as_str(), id, &ts, &signature, body, from),
            Ok(()),
            "{} refuses {signature}",
            reference.script
        );
    }

    // Rotation: several candidates, only the last one right.
    let right = sign(&ours, id, timestamp, body);
    let wrong = sign(&other, id, timestamp, body);
    let rotation = format!("{wrong} v1a,{} {right}", right.strip_prefix("v1,").unwrap());
    assert_eq!(
        reference.verify(ours.as_str(), id, &ts, &rotation, body, BodyFrom::File),
        Ok(())
    );

    // The script refuses what does not verify.
    let earlier = (timestamp - 1).to_string();
    let refusals: [(&Secret, &str, &str, &[u8]); 5] = [
        (&other, id, &ts, body),
        (&ours, id, &ts, br#"{"tampered":true}"#),
        (&ours, "evt_other", &ts, body),
        (&ours, id, &earlier, body),
        (&ours, id, "1614265330", body),
    ];
    for (secret, id, ts, body) in refusals {
        let outcome = reference.verify(secret.as_str(), id, ts, &right, body, BodyFrom::File);
        assert!(
            outcome.is_err(),
            "{} accepts {id} {ts} {}",
            reference.script,
            String::from_utf8_lossy(body)
        );
    }
}

#[test]
fn python_standardwebhooks_verifies_our_signatures() {
    check_against(&PYTHON);
}

#[test]
fn node_standardwebhooks_verifies_our_signatures() {
    check_against(&NODE);
}
