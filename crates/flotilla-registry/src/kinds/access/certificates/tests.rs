use super::*;
use base64::Engine;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A certificate request and a self-signed certificate of one new key.
fn request_and_certificate() -> (String, String) {
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["user.example".to_string()]).expect("params");
    let csr = params
        .serialize_request(&key)
        .expect("csr")
        .pem()
        .expect("pem");
    let cert = params.self_signed(&key).expect("cert").pem();
    (csr, cert)
}

fn csr(request: &str, signer: &str, usages: &[&str]) -> Value {
    json!({"metadata": {"name": "r"}, "spec": {"request": b64(request.as_bytes()), "signerName": signer, "usages": usages}})
}

fn messages(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn a_signed_request_with_signer_and_usages_is_valid() {
    let (request, _) = request_and_certificate();
    let obj = csr(
        &request,
        "example.com/signer",
        &["client auth", "digital signature"],
    );
    assert_eq!(messages(&validate(&obj, None)), Vec::<String>::new());
}

#[test]
fn requests_signers_usages_and_expiration_are_checked_as_upstream() {
    let (request, certificate) = request_and_certificate();
    let not_pem = csr("not a request", "example.com/signer", &["client auth"]);
    assert_eq!(
        messages(&validate(&not_pem, None)),
        [format!(
            "spec.request: Invalid value: {:?}: PEM block type must be CERTIFICATE REQUEST",
            b64(b"not a request")
        )]
    );
    // A certificate is not a request.
    let wrong_block = csr(&certificate, "example.com/signer", &["client auth"]);
    assert_eq!(validate(&wrong_block, None).len(), 1);
    // A request whose signature does not hold.
    let tampered = request.replacen("MII", "MIJ", 1);
    assert_eq!(
        validate(&csr(&tampered, "example.com/s", &["client auth"]), None).len(),
        1
    );

    let cases: &[(&str, &[&str], &str)] = &[
        ("", &["client auth"], "spec.signerName: Required value"),
        (
            "nodomain",
            &["client auth"],
            "spec.signerName: Invalid value: \"nodomain\": must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ),
        (
            "Example.com/a/b",
            &["client auth"],
            "must be a fully qualified domain",
        ),
        (
            "kubernetes.io/legacy-unknown",
            &["client auth"],
            "the legacy signerName is not allowed via this API version",
        ),
        (
            "example/x",
            &["client auth"],
            "should be a domain with at least two segments separated by dots",
        ),
        ("example.com/x", &[], "spec.usages: Required value"),
        (
            "example.com/x",
            &["flying"],
            "spec.usages[0]: Unsupported value: \"flying\": supported values: \"any\", \"cert sign\"",
        ),
        (
            "example.com/x",
            &["client auth", "client auth"],
            "spec.usages[1]: Duplicate value: \"client auth\"",
        ),
    ];
    for (signer, usages, want) in cases {
        let got = messages(&validate(&csr(&request, signer, usages), None));
        assert!(
            got.len() == 1 && got[0].contains(want),
            "{signer} {usages:?}: {got:?}"
        );
    }
    let mut short = csr(&request, "example.com/x", &["client auth"]);
    short["spec"]["expirationSeconds"] = json!(60);
    assert_eq!(
        messages(&validate(&short, None)),
        [
            "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)"
        ]
    );
}

#[test]
fn approval_changes_only_conditions_and_status_keeps_approval() {
    let (request, certificate) = request_and_certificate();
    let mut old = csr(&request, "example.com/x", &["client auth"]);
    old["status"] = json!({});
    // The approval endpoint takes the conditions and nothing else.
    let mut new = old.clone();
    new["spec"]["usages"] = json!(["server auth"]);
    new["status"] = json!({"conditions": [{"type": "Approved", "reason": "R"}], "certificate": b64(certificate.as_bytes())});
    prepare_update(&old, &mut new, Endpoint::Approval);
    assert_eq!(new["spec"], old["spec"]);
    assert!(new["status"].get("certificate").is_none());
    let approved = &new["status"]["conditions"][0];
    assert_eq!(approved["status"], "True");
    assert!(approved["lastUpdateTime"].is_string() && approved["lastTransitionTime"].is_string());
    assert!(validate(&new, Some(&old)).is_empty());

    // The status endpoint sets the certificate but cannot add a denial.
    let old = new;
    let mut new = old.clone();
    new["status"] = json!({"conditions": [{"type": "Denied", "status": "True"}], "certificate": b64(certificate.as_bytes())});
    prepare_update(&old, &mut new, Endpoint::Status);
    assert_eq!(new["status"]["conditions"], old["status"]["conditions"]);
    assert_eq!(condition_summary(&new), "Approved,Issued");
    assert!(validate(&new, Some(&old)).is_empty());

    // Both Approved and Denied, or an approval removed, is refused.
    let mut both = old.clone();
    both["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(json!({"type": "Denied", "status": "True"}));
    let errors = messages(&validate(&both, Some(&old)));
    assert!(
        errors
            .iter()
            .any(|e| e.contains("must specify at most one of")),
        "{errors:?}"
    );
    let mut removed = old.clone();
    removed["status"] = json!({});
    assert_eq!(
        messages(&validate(&removed, Some(&old))),
        ["status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""]
    );

    // A certificate must be PEM certificates, and stays once issued.
    let mut bad = old.clone();
    bad["status"]["certificate"] = json!(b64(b"not a certificate"));
    assert_eq!(
        messages(&validate(&bad, Some(&old))),
        [
            "status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"
        ]
    );
}
