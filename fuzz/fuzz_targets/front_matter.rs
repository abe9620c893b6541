//! Fuzzes the front matter of discovered agents, skills and commands
//! (`registry::agents::parse_front_matter`): any text must parse or be refused with a
//! message, never panic; what parses is normalised (no empty tool or alias names, a trimmed
//! body, no `inherit` model).
//!
//! Run: `cargo +nightly fuzz run front_matter -- -max_total_time=120` in the crate root.

#![no_main]

use atomic::registry::agents::parse_front_matter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_front_matter(&text) {
        Ok(front) => {
            let named = |name: &String| !name.trim().is_empty() && name.trim() == name;
            assert!(front.tools.iter().all(named), "{:?}", front.tools);
            assert!(front.aliases.iter().all(named), "{:?}", front.aliases);
            assert_eq!(front.body, front.body.trim());
            assert_ne!(front.model.as_deref(), Some("inherit"));
        }
        Err(error) => assert!(!error.message.is_empty()),
    }
});
