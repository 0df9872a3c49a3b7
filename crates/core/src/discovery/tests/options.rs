//! `discoverCodex` options from JSON; errors name the option.

use super::*;

#[test]
fn options_from_json() {
    let o = parse_options(None).unwrap();
    assert!(o.locus.is_none() && o.env.is_empty() && !o.refresh);
    let o = parse_options(Some("null")).unwrap();
    assert!(o.locus.is_none());
    let o = parse_options(Some(r#"{"locus":{"wsl":{"distro":"Ubuntu"}},"env":{"A":"1"},"refresh":true}"#)).unwrap();
    assert_eq!(o.locus, Some(Wsl { distro: "Ubuntu".into() }));
    assert_eq!(o.env, vec![("A".to_string(), "1".to_string())]);
    assert!(o.refresh);
    let err = |json: &str| parse_options(Some(json)).unwrap_err();
    assert!(err(r#"{"env":{"A":1}}"#).starts_with("options.env.A:"), "{}", err(r#"{"env":{"A":1}}"#));
    assert!(err(r#"{"refresh":"yes"}"#).starts_with("options.refresh:"));
    assert!(err(r#"{"locus":{"wsl":{}}}"#).starts_with("options.locus.wsl"), "{}", err(r#"{"locus":{"wsl":{}}}"#));
    assert!(err(r#"{"locus":{"wsl":{"distro":""}}}"#).starts_with("options.locus.wsl.distro"));
    assert!(err(r#"{"locus":{"docker":{}}}"#).starts_with("options.locus"));
    assert!(err(r#"{"refesh":true}"#).contains("refesh"));
    assert!(err(r#"{"env":{"A=B":"1"}}"#).starts_with("options.env"));
    assert!(err("[1]").starts_with("options"));
}
