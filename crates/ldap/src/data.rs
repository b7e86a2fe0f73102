//! The directory both servers hold: the seed's 6000 users and 4000 groups (sizes are
//! parameters), as one LDIF text, and the names a search asks for and must get back.
//!
//! Users follow the seed's harness (`search_performance_test.py`: `uid=user_0000001`
//! ...) with object classes both servers ship (inetOrgPerson + posixAccount), so the two
//! variants hold byte-for-byte the same entries. Each group has one member, since
//! OpenLDAP's `groupOfNames` requires one. This module starts no server.

use std::fmt::Write as _;

/// The suffix every entry lives under.
pub const SUFFIX: &str = "dc=example,dc=com";

/// The uid of user `i` (1-based), as the seed's harness named them.
pub fn uid(i: usize) -> String {
    format!("user_{i:07}")
}

/// The DN a search for user `i` must return.
pub fn user_dn(i: usize) -> String {
    format!("uid={},ou=people,{SUFFIX}", uid(i))
}

/// The search filter for user `i`: the seed's randomised uid equality search.
pub fn filter(i: usize) -> String {
    format!("(uid={})", uid(i))
}

/// The whole directory as LDIF: the suffix, two organisational units, `users` users and
/// `groups` groups. `aci` adds 389 DS's access rule letting anonymous clients read (the
/// seed's clients were anonymous); OpenLDAP's rule is in its configuration instead.
pub fn ldif(users: usize, groups: usize, aci: bool) -> String {
    let mut out = String::with_capacity(256 * (users + groups) + 1024);
    out.push_str("dn: dc=example,dc=com\nobjectClass: top\nobjectClass: domain\ndc: example\n");
    if aci {
        out.push_str(
            "aci: (targetattr=\"*\")(version 3.0; acl \"anonymous read\"; allow (read,search,compare) userdn=\"ldap:///anyone\";)\n",
        );
    }
    out.push('\n');
    for ou in ["people", "groups"] {
        let _ = write!(
            out,
            "dn: ou={ou},{SUFFIX}\nobjectClass: top\nobjectClass: organizationalUnit\nou: {ou}\n\n"
        );
    }
    for i in 1..=users {
        let r = uid(i);
        let _ = write!(
            out,
            "dn: {dn}\nobjectClass: top\nobjectClass: person\nobjectClass: organizationalPerson\n\
             objectClass: inetOrgPerson\nobjectClass: posixAccount\nuid: {r}\ncn: {r}\nsn: {r}\n\
             displayName: {r}\nuidNumber: {i}\ngidNumber: {i}\nhomeDirectory: /home/{r}\n\n",
            dn = user_dn(i)
        );
    }
    for i in 1..=groups {
        // A member among the users (any user when there are fewer users than groups).
        let member = user_dn((i - 1) % users.max(1) + 1);
        let _ = write!(
            out,
            "dn: cn=group_{i:07},ou=groups,{SUFFIX}\nobjectClass: top\nobjectClass: groupOfNames\n\
             cn: group_{i:07}\nmember: {member}\n\n"
        );
    }
    out
}

/// Checks one search's answer: exactly one entry, the one asked for, carrying its uid.
/// `entries` are (DN, uid values) pairs as the server returned them.
pub fn check_answer(asked: usize, entries: &[(String, Vec<String>)]) -> Result<(), String> {
    let want_dn = user_dn(asked);
    let want_uid = uid(asked);
    match entries {
        [(dn, uids)] if dn.eq_ignore_ascii_case(&want_dn) && uids.contains(&want_uid) => Ok(()),
        [(dn, uids)] => Err(format!(
            "asked for {want_uid}, got {dn} (uid {})",
            uids.join(",")
        )),
        _ => Err(format!(
            "asked for {want_uid}, got {} entries",
            entries.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_has_every_user_and_group_once() {
        let text = ldif(30, 7, true);
        assert_eq!(text.matches("objectClass: posixAccount").count(), 30);
        assert_eq!(text.matches("objectClass: groupOfNames").count(), 7);
        assert!(text.contains(&format!("dn: {}\n", user_dn(30))));
        assert!(!text.contains(&format!("dn: {}\n", user_dn(31))));
        assert_eq!(text.matches("aci:").count(), 1);
        assert!(!ldif(3, 0, false).contains("aci:"));
        // Entries are separated by one blank line each, as LDIF requires.
        assert_eq!(text.matches("\n\n").count(), 3 + 30 + 7);
    }

    #[test]
    fn a_wrong_answer_is_caught() {
        let right = vec![(user_dn(5), vec![uid(5)])];
        assert_eq!(check_answer(5, &right), Ok(()));
        // A search for one uid answered with another.
        let other = vec![(user_dn(6), vec![uid(6)])];
        let err = check_answer(5, &other).unwrap_err();
        assert!(
            err.contains("asked for user_0000005") && err.contains("user_0000006"),
            "{err}"
        );
        assert!(check_answer(5, &[]).unwrap_err().contains("0 entries"));
        let twice = vec![right[0].clone(), right[0].clone()];
        assert!(check_answer(5, &twice).unwrap_err().contains("2 entries"));
        // The right DN without its uid is still wrong.
        assert!(check_answer(5, &[(user_dn(5), vec![])]).is_err());
    }
}
