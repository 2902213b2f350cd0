use super::*;
use serde_json::json;

#[test]
fn parses_the_grammar_into_canonical_form() {
    // (input, canonical String() form as upstream prints it: requirements sorted by key, values sorted)
    let cases = [
        ("", ""),
        ("   ", ""),
        ("x=a", "x=a"),
        ("x==a", "x==a"),
        ("x!=a", "x!=a"),
        ("x", "x"),
        ("!x", "!x"),
        (" x = a , y ", "x=a,y"),
        ("\tx\n==\ra", "x==a"),
        ("x=", "x="),
        ("x=,y=b", "x=,y=b"),
        ("x in (b,a)", "x in (a,b)"),
        ("x in (a,a)", "x in (a)"),
        ("x notin (a)", "x notin (a)"),
        ("x in ()", "x in ()"),
        ("x in (,a)", "x in (,a)"),
        ("x in (a,)", "x in (,a)"),
        ("x in (a,,b)", "x in (,a,b)"),
        ("x in (in,notin)", "x in (in,notin)"),
        ("in in (in)", "in in (in)"),
        ("x>1", "x>1"),
        ("x<5", "x<5"),
        ("z=1,a=2,m", "a=2,m,z=1"),
        ("example.com/app=web", "example.com/app=web"),
    ];
    for (input, want) in cases {
        match Selector::parse(input) {
            Ok(sel) => assert_eq!(sel.to_string(), want, "input {input:?}"),
            Err(e) => panic!("input {input:?} failed: {e}"),
        }
    }
    // The HTTP layer must turn '+' into spaces first: the parser takes a literal '+' as part of the key.
    assert!(Selector::parse("env+in+(a)").is_err());
}

#[test]
fn rejects_with_the_real_servers_messages() {
    let name_part = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end \
                     with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for \
                     validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    let value_msg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', \
                     and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or \
                     '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
    let cases: Vec<(&str, String)> = vec![
        ("app:monolith", format!("unable to parse requirement: <nil>: Invalid value: \"app:monolith\": {name_part}")),
        ("x=a b", "found 'b', expected: ',' or 'end of string'".to_string()),
        ("x=a,", "found '', expected: identifier after ','".to_string()),
        ("x=a,=b", "found '=', expected: identifier after ','".to_string()),
        ("=a", "found '=', expected: !, identifier, or 'end of string'".to_string()),
        (",x", "found ',', expected: !, identifier, or 'end of string'".to_string()),
        ("x y", "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt".to_string()),
        ("!x=a", "found '=', expected: ',' or 'end of string'".to_string()),
        ("!", "unable to parse requirement: found '', expected: identifier".to_string()),
        ("!!x", "unable to parse requirement: found '!', expected: identifier".to_string()),
        ("x in a", "unable to parse requirement: found 'a' expected: '('".to_string()),
        ("x in (a", "unable to parse requirement: found '', expected: ',' or ')'".to_string()),
        ("x in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'".to_string()),
        ("x in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier".to_string()),
        ("x in (a,=)", "unable to parse requirement: found '=', expected: ',', or identifier".to_string()),
        ("x==!", "unable to parse requirement: found '!', expected: identifier".to_string()),
        ("x>a", "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer".to_string()),
        ("x>1.5", "unable to parse requirement: values[0]: Invalid value: \"1.5\": for 'Gt', 'Lt' operators, the value must be an integer".to_string()),
        // Negative numbers are integers but not label values, so upstream refuses them too.
        ("x<-5", format!("unable to parse requirement: values[0][x]: Invalid value: \"-5\": {value_msg}")),
        ("app=a/b", format!("unable to parse requirement: values[0][app]: Invalid value: \"a/b\": {value_msg}")),
        ("x in (-a,-b)", format!(
            "unable to parse requirement: [values[0][x]: Invalid value: \"-a\": {value_msg}, values[1][x]: Invalid value: \"-b\": {value_msg}]"
        )),
    ];
    for (input, want) in cases {
        let err = Selector::parse(input).expect_err(input);
        assert_eq!(err.message, want, "input {input:?}");
        assert_eq!(err.to_status().code, 400);
    }
}

#[test]
fn matches_like_the_real_server() {
    let l = json!({"app": "web", "tier": "front", "n": "10", "empty": ""});
    // (selector, matches the labels above, matches no labels at all)
    let cases = [
        ("", true, true),
        ("app=web", true, false),
        ("app==web", true, false),
        ("app=db", false, false),
        ("app!=db", true, true),
        ("app!=web", false, true),
        ("missing!=x", true, true),
        ("app in (web,db)", true, false),
        ("app notin (web)", false, true),
        ("app notin (db)", true, true),
        ("app", true, false),
        ("!app", false, true),
        ("!missing", true, true),
        ("empty=", true, false),
        ("empty", true, false),
        ("empty in ()", true, false),
        ("app in ()", false, false),
        ("n>9", true, false),
        ("n>10", false, false),
        ("n<11", true, false),
        ("app>1", false, false),
        ("app=web,tier=front", true, false),
        ("app=web,tier=back", false, false),
    ];
    for (sel, with_labels, without) in cases {
        let s = Selector::parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
        assert_eq!(s.matches(Some(&l)), with_labels, "{sel} on labels");
        assert_eq!(s.matches(None), without, "{sel} on no labels");
        assert_eq!(
            s.matches(Some(&Value::Null)),
            without,
            "{sel} on null labels"
        );
        assert_eq!(
            s.matches_object(&json!({"metadata": {"labels": l}})),
            with_labels,
            "{sel} on object"
        );
    }
}

#[test]
fn converts_label_selector_objects() {
    let l = json!({"app": "web", "tier": "front"});
    let cases = [
        (json!(null), false, "", false),
        (json!({}), true, "", true),
        (
            json!({"matchLabels": {"app": "web"}}),
            true,
            "app=web",
            false,
        ),
        (
            json!({"matchLabels": {"tier": "front", "app": "web"}}),
            true,
            "app=web,tier=front",
            false,
        ),
        (
            json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "web"]}]}),
            true,
            "app in (db,web)",
            false,
        ),
        (
            json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}),
            false,
            "app notin (web)",
            true,
        ),
        (
            json!({"matchExpressions": [{"key": "app", "operator": "Exists"}]}),
            true,
            "app",
            false,
        ),
        (
            json!({"matchExpressions": [{"key": "x", "operator": "DoesNotExist"}]}),
            true,
            "!x",
            true,
        ),
        (
            json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["back"]}]}),
            false,
            "app=web,tier in (back)",
            false,
        ),
    ];
    for (ls, want, text, want_empty) in cases {
        let s = Selector::from_label_selector(&ls).unwrap_or_else(|e| panic!("{ls}: {e}"));
        assert_eq!(s.matches(Some(&l)), want, "{ls}");
        assert_eq!(s.matches(None), want_empty, "{ls} on no labels");
        assert_eq!(s.to_string(), text);
    }
}

#[test]
fn rejects_bad_label_selector_objects() {
    let cases = [
        (
            json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]}),
            "\"Foo\" is not a valid label selector operator",
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]}),
            "values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}),
            "values: Invalid value: [\"x\"]: values set must be empty for exists and does not exist",
        ),
        (
            json!({"matchLabels": {"a b": "x"}}),
            "key: Invalid value: \"a b\": name part must consist of",
        ),
        (json!("app=web"), "label selector must be an object"),
    ];
    for (ls, want) in cases {
        let err = Selector::from_label_selector(&ls).expect_err("must fail");
        assert!(err.message.starts_with(want), "{ls}: got {}", err.message);
    }
}

#[test]
fn requirement_accessors() {
    let s = Selector::parse("b in (y,x),a").unwrap_or_default();
    let keys: Vec<&str> = s.requirements().iter().map(Requirement::key).collect();
    assert_eq!(keys, ["a", "b"]);
    assert_eq!(s.requirements()[1].operator(), Operator::In);
    assert_eq!(s.requirements()[1].values(), ["x", "y"]);
    assert!(Selector::everything().is_everything());
    assert!(!Selector::nothing().is_everything());
    assert!(!Selector::nothing().matches(None));
}
