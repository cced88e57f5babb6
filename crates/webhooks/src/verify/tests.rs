//! Unit tests of verification: the Standard Webhooks vectors, tolerance,
//! secrets and header forms.

use super::*;
use crate::sign;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP: i64 = 1_614_265_330;
const TIMESTAMP_HEADER: &str = "1614265330";
const BODY: &[u8] = br#"{"test": 2432232314}"#;
const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

fn verifier() -> Verifier {
    Verifier::new(Secret::parse(SECRET).unwrap())
}

#[test]
fn verifies_the_standard_webhooks_test_vector() {
    assert_eq!(
        verifier().verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
        Ok(())
    );
}

#[test]
fn accepts_when_any_v1_candidate_matches() {
    let other = Secret::from_random_bytes([1; 32]);
    let wrong = sign(&other, ID, TIMESTAMP, BODY);
    let headers = [
        format!("{wrong} v1,bm90IGEgc2lnbmF0dXJl {SIGNATURE}"),
        format!("v1a,{} {SIGNATURE}", &SIGNATURE[3..]),
        format!("v2,abc  {wrong}  {SIGNATURE} "),
        // Unpadded base64 is accepted too.
        format!("{wrong} {}", SIGNATURE.trim_end_matches('=')),
    ];
    for header in &headers {
        assert_eq!(
            verifier().verify(ID, TIMESTAMP_HEADER, header, BODY, TIMESTAMP),
            Ok(()),
            "{header}"
        );
    }
}

#[test]
fn ignores_candidates_of_other_versions() {
    let header = format!("v1a,{} v2,{}", &SIGNATURE[3..], &SIGNATURE[3..]);
    assert_eq!(
        verifier().verify(ID, TIMESTAMP_HEADER, &header, BODY, TIMESTAMP),
        Err(VerifyError::NoMatchingSignature)
    );
}

#[test]
fn refuses_tampering() {
    let v = verifier();
    let cases = [
        (
            ID,
            TIMESTAMP_HEADER,
            &br#"{"test": 2432232315}"#[..],
            TIMESTAMP,
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            &br#"{"test": 2432232314} "#[..],
            TIMESTAMP,
        ),
        (ID, TIMESTAMP_HEADER, &b""[..], TIMESTAMP),
        (
            "msg_p5jXN8AQM9LWM0D4loKWxJeK",
            TIMESTAMP_HEADER,
            BODY,
            TIMESTAMP,
        ),
        (ID, "1614265331", BODY, TIMESTAMP),
    ];
    for (id, timestamp, body, now) in cases {
        assert_eq!(
            v.verify(id, timestamp, SIGNATURE, body, now),
            Err(VerifyError::NoMatchingSignature),
            "{id} {timestamp} {body:?}"
        );
    }
    // A flipped character in the signature itself.
    let flipped = SIGNATURE.replacen('g', "h", 1);
    assert_eq!(
        v.verify(ID, TIMESTAMP_HEADER, &flipped, BODY, TIMESTAMP),
        Err(VerifyError::NoMatchingSignature)
    );
}

#[test]
fn refuses_another_secret() {
    let v = Verifier::new(Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSx").unwrap());
    assert_eq!(
        v.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
        Err(VerifyError::NoMatchingSignature)
    );
    let ours = Verifier::new(Secret::from_random_bytes([0; 32]));
    assert_eq!(
        ours.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
        Err(VerifyError::NoMatchingSignature)
    );
}

#[test]
fn enforces_the_tolerance_both_ways() {
    let v = verifier();
    let check = |now| v.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, now);
    assert_eq!(check(TIMESTAMP + 300), Ok(()));
    assert_eq!(check(TIMESTAMP - 300), Ok(()));
    assert_eq!(
        check(TIMESTAMP + 301),
        Err(VerifyError::TimestampTooOld {
            age_secs: 301,
            tolerance_secs: 300
        })
    );
    assert_eq!(
        check(TIMESTAMP - 301),
        Err(VerifyError::TimestampTooNew {
            ahead_secs: 301,
            tolerance_secs: 300
        })
    );
    assert_eq!(
        check(i64::MAX),
        Err(VerifyError::TimestampTooOld {
            age_secs: i64::MAX - TIMESTAMP,
            tolerance_secs: 300
        })
    );
    assert!(matches!(
        check(i64::MIN),
        Err(VerifyError::TimestampTooNew { .. })
    ));
}

#[test]
fn the_tolerance_is_configurable() {
    let v = verifier().with_tolerance(Duration::from_millis(10_999));
    let check = |now| v.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, now);
    assert_eq!(check(TIMESTAMP + 10), Ok(()));
    assert_eq!(check(TIMESTAMP - 10), Ok(()));
    assert!(matches!(
        check(TIMESTAMP + 11),
        Err(VerifyError::TimestampTooOld {
            age_secs: 11,
            tolerance_secs: 10
        })
    ));
    let strict = verifier().with_tolerance(Duration::ZERO);
    assert_eq!(
        strict.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP),
        Ok(())
    );
    assert!(
        strict
            .verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, TIMESTAMP + 1)
            .is_err()
    );
    let lax = verifier().with_tolerance(Duration::MAX);
    assert_eq!(
        lax.verify(ID, TIMESTAMP_HEADER, SIGNATURE, BODY, i64::MAX),
        Ok(())
    );
}

#[test]
fn refuses_malformed_headers() {
    let v = verifier();
    for (id, timestamp, signature, want) in [
        (
            "",
            TIMESTAMP_HEADER,
            SIGNATURE,
            VerifyError::MissingHeader("webhook-id"),
        ),
        (
            ID,
            "",
            SIGNATURE,
            VerifyError::MissingHeader("webhook-timestamp"),
        ),
        (
            ID,
            " ",
            SIGNATURE,
            VerifyError::MissingHeader("webhook-timestamp"),
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            "",
            VerifyError::MissingHeader("webhook-signature"),
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            "  ",
            VerifyError::MissingHeader("webhook-signature"),
        ),
        (ID, "-1614265330", SIGNATURE, VerifyError::InvalidTimestamp),
        (ID, "+1614265330", SIGNATURE, VerifyError::InvalidTimestamp),
        (ID, "1614265330.0", SIGNATURE, VerifyError::InvalidTimestamp),
        (
            ID,
            "2021-02-25T15:02:10Z",
            SIGNATURE,
            VerifyError::InvalidTimestamp,
        ),
        (
            ID,
            "99999999999999999999",
            SIGNATURE,
            VerifyError::InvalidTimestamp,
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            "g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
            VerifyError::InvalidSignatureHeader,
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            "v1, ,v1",
            VerifyError::InvalidSignatureHeader,
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            "v1,***",
            VerifyError::NoMatchingSignature,
        ),
        (
            ID,
            TIMESTAMP_HEADER,
            "v1,AAAA",
            VerifyError::NoMatchingSignature,
        ),
    ] {
        assert_eq!(
            v.verify(id, timestamp, signature, BODY, TIMESTAMP),
            Err(want),
            "{id:?} {timestamp:?} {signature:?}"
        );
    }
}

#[test]
fn reads_headers_through_a_lookup() {
    let v = verifier();
    let all = |name: &str| match name {
        "webhook-id" => Some(ID),
        "webhook-timestamp" => Some(TIMESTAMP_HEADER),
        "webhook-signature" => Some(SIGNATURE),
        _ => None,
    };
    assert_eq!(v.verify_headers(all, BODY, TIMESTAMP), Ok(()));
    for missing in [HEADER_ID, HEADER_TIMESTAMP, HEADER_SIGNATURE] {
        let lookup = |name: &str| if name == missing { None } else { all(name) };
        assert_eq!(
            v.verify_headers(lookup, BODY, TIMESTAMP),
            Err(VerifyError::MissingHeader(missing))
        );
    }
}

#[test]
fn errors_read_clearly() {
    assert_eq!(
        VerifyError::TimestampTooOld {
            age_secs: 301,
            tolerance_secs: 300
        }
        .to_string(),
        "the webhook-timestamp is 301 s old, more than the 300 s tolerance"
    );
    assert_eq!(
        VerifyError::MissingHeader(HEADER_SIGNATURE).to_string(),
        "the webhook-signature header is missing or empty"
    );
    let boxed: Box<dyn std::error::Error> = Box::new(VerifyError::NoMatchingSignature);
    assert!(boxed.to_string().contains("no v1 signature"));
}

mod properties {
    use proptest::prelude::*;

    use super::super::*;
    use crate::sign;

    proptest! {
        #[test]
        fn what_is_signed_verifies_and_any_change_does_not(
            key in any::<[u8; 32]>(),
            id in "[A-Za-z0-9_]{1,40}",
            timestamp in 0_i64..4_000_000_000,
            body in proptest::collection::vec(any::<u8>(), 0..256),
            skew in -300_i64..=300,
            flip in any::<(usize, u8)>(),
        ) {
            let secret = Secret::from_random_bytes(key);
            let signature = sign(&secret, &id, timestamp, &body);
            let verifier = Verifier::new(secret);
            let header = timestamp.to_string();
            let now = timestamp + skew;
            prop_assert_eq!(verifier.verify(&id, &header, &signature, &body, now), Ok(()));

            let mut changed = body.clone();
            let bit = flip.1.max(1);
            match changed.get_mut(flip.0 % body.len().max(1)) {
                Some(b) => *b ^= bit,
                None => changed.push(bit),
            }
            prop_assert_eq!(
                verifier.verify(&id, &header, &signature, &changed, now),
                Err(VerifyError::NoMatchingSignature)
            );
        }
    }
}
