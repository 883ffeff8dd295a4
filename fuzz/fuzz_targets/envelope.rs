//! Inbound envelope extraction (`protocol::extract_envelope`) on arbitrary delivered text, and
//! the sender's wrapper round trip. Invariants: whatever is extracted is a valid envelope; a
//! wrapper built for any acceptable message yields exactly its envelope again, also when the
//! message itself contains envelope-looking lines.
#![no_main]

use herdr_link::protocol::{extract_envelope, is_envelope, Envelope};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Some(e) = extract_envelope(&text) {
        let v = serde_json::to_value(&e).expect("serializes");
        assert!(is_envelope(&v), "{v}");
    }
    if let Ok(e) = Envelope::build("sender", "receiver", &text) {
        assert_eq!(e.message, text);
        assert_eq!(extract_envelope(&e.wrapper()), Some(e));
    }
});
