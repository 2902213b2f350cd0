use http::HeaderValue;

use super::*;

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn kube_apiservers() -> RequestHeaderConfig {
    RequestHeaderConfig::from_data(&data(&[
        (ALLOWED_NAMES, r#"["front-proxy-client"]"#),
        (USERNAME_HEADERS, r#"["X-Remote-User"]"#),
        (UID_HEADERS, r#"["X-Remote-Uid"]"#),
        (GROUP_HEADERS, r#"["X-Remote-Group"]"#),
        (EXTRA_PREFIXES, r#"["X-Remote-Extra-"]"#),
    ]))
    .expect("kube-apiserver's values parse")
}

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in pairs {
        headers.append(*name, HeaderValue::from_static(value));
    }
    headers
}

#[test]
fn the_identity_comes_from_the_configured_headers() {
    let config = kube_apiservers();
    let user = config
        .identity(&headers(&[
            ("x-remote-user", "tom"),
            ("x-remote-uid", "u-1"),
            ("x-remote-group", "devs"),
            ("x-remote-group", ""),
            ("x-remote-group", "system:authenticated"),
            ("x-remote-extra-scopes", "a"),
            ("x-remote-extra-scopes", "b"),
            ("x-remote-extra-example.com%2fteam", "blue"),
            ("x-remote-extra-bad%zz", "kept"),
        ]))
        .expect("a user");
    assert_eq!(user.name, "tom");
    assert_eq!(user.uid, "u-1");
    assert_eq!(user.groups, ["devs", "system:authenticated"]);
    assert_eq!(user.extra["scopes"], ["a", "b"]);
    assert_eq!(user.extra["example.com/team"], ["blue"]);
    assert_eq!(user.extra["bad%zz"], ["kept"]);
}

#[test]
fn without_a_user_name_there_is_no_identity() {
    let config = kube_apiservers();
    assert!(matches!(
        config.identity(&headers(&[("x-remote-group", "devs")])),
        Err(Rejected::NoUser)
    ));
    assert!(matches!(
        config.identity(&headers(&[("x-remote-user", "")])),
        Err(Rejected::NoUser)
    ));
}

#[test]
fn the_first_non_empty_user_header_wins() {
    let config = RequestHeaderConfig::from_data(&data(&[(
        USERNAME_HEADERS,
        r#"["X-Remote-User", "X-Other-User"]"#,
    )]))
    .expect("parses");
    let user = config
        .identity(&headers(&[("x-remote-user", ""), ("x-other-user", "ann")]))
        .expect("a user");
    assert_eq!(user.name, "ann");
    assert!(user.groups.is_empty() && user.extra.is_empty());
}

#[test]
fn identity_headers_are_the_configured_ones() {
    let config = kube_apiservers();
    for name in [
        "x-remote-user",
        "x-remote-uid",
        "x-remote-group",
        "x-remote-extra-anything",
    ] {
        assert!(
            config.is_identity_header(&HeaderName::from_static(name)),
            "{name}"
        );
    }
    assert!(!config.is_identity_header(&HeaderName::from_static("x-remote-other")));
}

#[test]
fn malformed_values_name_their_key() {
    let error = RequestHeaderConfig::from_data(&data(&[(GROUP_HEADERS, "X-Remote-Group")]))
        .expect_err("not JSON");
    assert_eq!(
        error.to_string(),
        "requestheader-group-headers is not a JSON array of strings"
    );
    let error = RequestHeaderConfig::from_data(&data(&[(USERNAME_HEADERS, r#"["bad header"]"#)]))
        .expect_err("not a header name");
    assert!(error.to_string().contains("requestheader-username-headers"));
    let error = RequestHeaderConfig::from_data(&data(&[(CLIENT_CA, "not a PEM")]))
        .expect_err("no certificate");
    assert!(error.to_string().contains(CLIENT_CA));
}

#[test]
fn without_a_ca_or_a_certificate_nobody_is_a_front_proxy() {
    let config = kube_apiservers();
    assert!(matches!(
        config.authenticate(&[], &headers(&[("x-remote-user", "tom")])),
        Err(Rejected::NoCertificate)
    ));
    let some_cert = CertificateDer::from(vec![0x30, 0x00]);
    assert!(matches!(
        config.authenticate(&[some_cert], &headers(&[("x-remote-user", "tom")])),
        Err(Rejected::NoClientCa)
    ));
}
