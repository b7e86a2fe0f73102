//! Command and configuration templates: text with `{name}` variables filled per cell.
//!
//! A variable is a name of lower-case letters and underscores between braces, and
//! nothing else is: `events { worker_connections 64; }` in an nginx configuration or a
//! JSON body in a load command stays as written, so a template needs no escaping. A
//! variable the hot path does not offer is refused when the plan is checked, before
//! anything runs, with the name and the variables accepted. This module knows nothing of
//! servers or loads; [`crate::spec`] says which variables each template gets.

use std::collections::BTreeMap;

/// The variables a template holds, in order of appearance, each once.
pub fn variables(text: &str) -> Vec<&str> {
    let mut found: Vec<&str> = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('}') {
            let name = &after[..name_len];
            if !found.contains(&name) {
                found.push(name);
            }
            rest = &after[name_len + 1..];
        } else {
            rest = after;
        }
    }
    found
}

/// Refuses a template that names a variable outside `accepted`; `what` names the
/// template in the message (`server.command`, say).
pub fn check(what: &str, text: &str, accepted: &[&str]) -> Result<(), String> {
    match variables(text).into_iter().find(|v| !accepted.contains(v)) {
        Some(unknown) => Err(format!(
            "{what}: unknown variable {{{unknown}}}: accepted {}",
            accepted
                .iter()
                .map(|v| format!("{{{v}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        None => Ok(()),
    }
}

/// `text` with every variable replaced by its value in `values`. A variable without a
/// value is left as written: [`check`] has refused those already.
pub fn fill(text: &str, values: &BTreeMap<&str, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '_'))
            .unwrap_or(after.len());
        match values.get(&after[..name_len]) {
            Some(value) if name_len > 0 && after[name_len..].starts_with('}') => {
                out.push_str(value);
                rest = &after[name_len + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_names_in_braces_and_other_braces_stay() {
        let conf = "worker_processes {threads};\nevents { worker_connections 64; }\nlisten {port}; {x-y} {} {Port} {threads}";
        assert_eq!(variables(conf), vec!["threads", "port"]);
        let values = BTreeMap::from([("threads", "4".to_owned()), ("port", "8080".to_owned())]);
        assert_eq!(
            fill(conf, &values),
            "worker_processes 4;\nevents { worker_connections 64; }\nlisten 8080; {x-y} {} {Port} 4"
        );
        assert_eq!(fill("{unset} {port}", &values), "{unset} 8080");
        assert_eq!(fill("tail {", &values), "tail {");
    }

    #[test]
    fn an_unknown_variable_is_refused_with_what_is_accepted() {
        assert!(check(
            "server.command",
            "memcached -t {threads} -p {port}",
            &["threads", "port"]
        )
        .is_ok());
        let err = check(
            "server.command",
            "memcached -t {thread}",
            &["threads", "port"],
        )
        .unwrap_err();
        assert_eq!(
            err,
            "server.command: unknown variable {thread}: accepted {threads}, {port}"
        );
    }
}
