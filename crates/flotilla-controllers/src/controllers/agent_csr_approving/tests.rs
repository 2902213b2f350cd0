#![allow(clippy::unwrap_used)]

use k8s_openapi::ByteString;
use k8s_openapi::api::certificates::v1::{
    CertificateSigningRequestSpec, CertificateSigningRequestStatus,
};
use pretty_assertions::assert_eq;
use rcgen::{CertificateParams, DistinguishedName, DnType, KeyPair, SanType};
use serde_json::json;

use super::recognize::{NotAgent, Recognizer, parse, undecided, validate_agent};
use super::*;

const AGENT: &str = "system:karmada:agent:member1";
const CLIENT_USAGES: [&str; 3] = ["digital signature", "key encipherment", "client auth"];

/// A PEM certificate request for `cn` in `orgs` asking for `sans`.
fn pem(cn: &str, orgs: &[&str], sans: Vec<SanType>) -> String {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    params.distinguished_name.push(DnType::CommonName, cn);
    for org in orgs {
        params
            .distinguished_name
            .push(DnType::OrganizationName, *org);
    }
    params.subject_alt_names = sans;
    params.serialize_request(&key).unwrap().pem().unwrap()
}

fn csr(pem: &str, username: &str, usages: &[&str]) -> CertificateSigningRequest {
    CertificateSigningRequest {
        metadata: kube::api::ObjectMeta {
            name: Some("agent".into()),
            resource_version: Some("7".into()),
            ..Default::default()
        },
        spec: CertificateSigningRequestSpec {
            request: ByteString(pem.as_bytes().to_vec()),
            signer_name: KUBE_APISERVER_CLIENT.into(),
            usages: Some(usages.iter().map(|u| (*u).to_owned()).collect()),
            username: Some(username.into()),
            uid: Some("uid-1".into()),
            groups: Some(vec![
                "system:bootstrappers".into(),
                "system:authenticated".into(),
            ]),
            extra: Some([("scopes".to_owned(), vec!["a".to_owned(), "b".to_owned()])].into()),
            ..Default::default()
        },
        status: None,
    }
}

fn recognized(csr: &CertificateSigningRequest) -> Vec<Recognizer> {
    let request = parse(&csr.spec.request.0).unwrap();
    recognizers_for(csr, &request)
}

fn usages(list: &[&str]) -> Vec<String> {
    list.iter().map(|u| (*u).to_owned()).collect()
}

#[test]
fn a_bootstrap_request_is_an_agent_request() {
    let agent = csr(
        &pem(AGENT, &["system:karmada:agents"], vec![]),
        "system:bootstrap:abcdef",
        &CLIENT_USAGES,
    );
    assert_eq!(recognized(&agent), [Recognizer::Agent]);
}

#[test]
fn an_agent_renewing_its_certificate_is_tried_as_self_first() {
    let renewal = csr(
        &pem(AGENT, &["system:karmada:agents"], vec![]),
        AGENT,
        &CLIENT_USAGES,
    );
    assert_eq!(
        recognized(&renewal),
        [Recognizer::SelfAgent, Recognizer::Agent]
    );
}

#[test]
fn the_usages_are_a_client_certificates_with_or_without_key_encipherment() {
    let request = parse(pem(AGENT, &["system:karmada:agents"], vec![]).as_bytes()).unwrap();
    for ok in [
        &CLIENT_USAGES[..],
        &["client auth", "digital signature"],
        // A set: order and repetition do not matter.
        &["client auth", "digital signature", "client auth"],
    ] {
        assert_eq!(validate_agent(&request, &usages(ok)), Ok(()), "{ok:?}");
    }
    for wrong in [
        &["client auth"][..],
        &["digital signature", "key encipherment"],
        &[
            "digital signature",
            "key encipherment",
            "client auth",
            "server auth",
        ],
        &[],
    ] {
        let refused = validate_agent(&request, &usages(wrong));
        assert_eq!(refused, Err(NotAgent::Usages), "{wrong:?}");
    }
    assert_eq!(
        NotAgent::Usages.to_string(),
        "usages did not match [client auth digital signature key encipherment]"
    );
}

#[test]
fn only_the_agents_organization_alone_makes_an_agent_request() {
    for orgs in [&["system:nodes"][..], &[]] {
        let request = parse(pem(AGENT, orgs, vec![]).as_bytes()).unwrap();
        assert_eq!(
            validate_agent(&request, &usages(&CLIENT_USAGES)),
            Err(NotAgent::Organization),
            "{orgs:?}"
        );
    }
    // rcgen keeps one value per attribute type, so a subject in several organizations is made by hand.
    for orgs in [
        ["system:karmada:agents", "system:masters"],
        ["system:masters", "system:karmada:agents"],
    ] {
        let request = recognize::Request {
            common_name: AGENT.to_owned(),
            organizations: orgs.map(str::to_owned).to_vec(),
            ..Default::default()
        };
        assert_eq!(
            validate_agent(&request, &usages(&CLIENT_USAGES)),
            Err(NotAgent::Organization),
            "{orgs:?}"
        );
    }
    let node = csr(
        &pem(AGENT, &["system:nodes"], vec![]),
        AGENT,
        &CLIENT_USAGES,
    );
    assert_eq!(recognized(&node), []);
}

#[test]
fn subject_alternative_names_and_other_users_are_not_an_agents() {
    let orgs = &["system:karmada:agents"];
    let cases = [
        (
            pem(
                AGENT,
                orgs,
                vec![SanType::DnsName("member1".try_into().unwrap())],
            ),
            NotAgent::DnsNames,
        ),
        (
            pem(
                AGENT,
                orgs,
                vec![SanType::Rfc822Name("a@example.com".try_into().unwrap())],
            ),
            NotAgent::EmailAddresses,
        ),
        (
            pem(AGENT, orgs, vec![SanType::IpAddress([127, 0, 0, 1].into())]),
            NotAgent::IpAddresses,
        ),
        (
            pem(
                AGENT,
                orgs,
                vec![SanType::URI("spiffe://member1".try_into().unwrap())],
            ),
            NotAgent::Uris,
        ),
        (
            pem("system:node:member1", orgs, vec![]),
            NotAgent::CommonName,
        ),
        (pem("", orgs, vec![]), NotAgent::CommonName),
    ];
    for (pem, why) in cases {
        let request = parse(pem.as_bytes()).unwrap();
        assert_eq!(validate_agent(&request, &usages(&CLIENT_USAGES)), Err(why));
    }
}

#[test]
fn another_signers_request_is_not_an_agents() {
    let mut other = csr(
        &pem(AGENT, &["system:karmada:agents"], vec![]),
        AGENT,
        &CLIENT_USAGES,
    );
    other.spec.signer_name = "kubernetes.io/kube-apiserver-client-kubelet".into();
    assert_eq!(recognized(&other), []);
    assert!(!undecided(&other));
}

#[test]
fn a_request_that_is_not_a_pem_certificate_request_cannot_be_parsed() {
    let key = KeyPair::generate().unwrap();
    let certificate = CertificateParams::new(vec!["member1".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap()
        .pem();
    for wrong in [certificate.as_str(), "not pem", ""] {
        let refused = parse(wrong.as_bytes());
        assert!(refused.is_err(), "{wrong:?}: {refused:?}");
    }
    assert_eq!(
        parse(b"garbage"),
        Err("PEM block type must be CERTIFICATE REQUEST".to_owned())
    );
}

#[test]
fn only_undecided_requests_without_a_certificate_wait_for_a_decision() {
    let fresh = csr(
        &pem(AGENT, &["system:karmada:agents"], vec![]),
        AGENT,
        &CLIENT_USAGES,
    );
    assert!(undecided(&fresh));
    let with_status = |status: serde_json::Value| {
        let mut csr = fresh.clone();
        csr.status =
            Some(serde_json::from_value::<CertificateSigningRequestStatus>(status).unwrap());
        csr
    };
    assert!(undecided(&with_status(json!({}))));
    assert!(undecided(&with_status(
        json!({"conditions": [{"type": "Failed", "status": "True"}]})
    )));
    for decided in [
        json!({"conditions": [{"type": "Approved", "status": "True"}]}),
        json!({"conditions": [{"type": "Denied", "status": "True"}]}),
        json!({"certificate": "Y2VydA=="}),
    ] {
        assert!(!undecided(&with_status(decided.clone())), "{decided}");
    }
}

#[test]
fn the_review_asks_for_the_requester_and_the_recognizers_permission() {
    let agent = csr(
        &pem(AGENT, &["system:karmada:agents"], vec![]),
        "system:bootstrap:abcdef",
        &CLIENT_USAGES,
    );
    let review = serde_json::to_value(review_for(&agent, Recognizer::Agent)).unwrap();
    assert_eq!(
        review,
        json!({
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "metadata": {},
            "spec": {
                "user": "system:bootstrap:abcdef", "uid": "uid-1",
                "groups": ["system:bootstrappers", "system:authenticated"],
                "extra": {"scopes": ["a", "b"]},
                "resourceAttributes": {"group": "certificates.k8s.io", "resource": "certificatesigningrequests",
                    "subresource": "clusteragent", "verb": "create", "version": "*"},
            },
        })
    );
    let review = review_for(&agent, Recognizer::SelfAgent);
    let attributes = review.spec.resource_attributes.unwrap();
    assert_eq!(attributes.subresource.as_deref(), Some("selfclusteragent"));
}

#[test]
fn approval_appends_karmadas_condition() {
    let mut agent = csr(
        &pem(AGENT, &["system:karmada:agents"], vec![]),
        AGENT,
        &CLIENT_USAGES,
    );
    agent.status = Some(
        serde_json::from_value(json!({"conditions": [{"type": "Failed", "status": "False"}]}))
            .unwrap(),
    );
    for (recognizer, message) in [
        (
            Recognizer::SelfAgent,
            "Auto approving self karmada agent certificate after SubjectAccessReview.",
        ),
        (
            Recognizer::Agent,
            "Auto approving karmada agent certificate after SubjectAccessReview.",
        ),
    ] {
        let written = approved(agent.clone(), recognizer);
        // Kept as read: the write is conditional on the object the decision was made on.
        assert_eq!(written.metadata.resource_version.as_deref(), Some("7"));
        let conditions = serde_json::to_value(written.status.unwrap().conditions).unwrap();
        assert_eq!(
            conditions,
            json!([
                {"type": "Failed", "status": "False"},
                {"type": "Approved", "status": "True", "reason": "AutoApproved", "message": message},
            ])
        );
    }
}
