//! The JSON layer: parsing never panics; whatever parses writes back to the
//! same value, and a lossless object decode re-encodes to the same value.
#![no_main]

use agentlog::json::{List, OwnedValue, Parser, Str, Style, Value};
use libfuzzer_sys::fuzz_target;

agentlog::json_object! {
    /// A few declared members of the common kinds.
    pub struct Probe<'a> {
        /// A string member.
        kind: Str<'a> = "kind",
        /// Another.
        id: Str<'a> = "id",
        /// A flag.
        flag: bool = "flag",
        /// Anything.
        any: Value<'a> = "any",
        /// Nested objects of the same shape.
        children: List<'a, Probe<'a>> = "children",
    }
}

fuzz_target!(|data: &[u8]| {
    let mut parser = Parser::new();
    let Ok(doc) = parser.parse(data) else { return };
    let root = doc.root();
    let owned = OwnedValue::from(root);
    // Every value's span holds text that parses to the same value.
    let written = owned.to_string_styled(Style::COMPACT);
    let again = OwnedValue::parse(written.as_bytes()).expect("our own output parses");
    assert_eq!(owned, again, "write-back changed the value");
    let raw_again = OwnedValue::parse(root.raw()).expect("the root's raw span parses");
    assert_eq!(owned, raw_again);
    if let Some(probe) = Probe::decode(root) {
        let encoded = probe.to_json();
        let value = OwnedValue::parse(&encoded).expect("encoded object parses");
        assert_eq!(value, owned, "decode then encode changed the value");
    }
    // Walk everything: getters never panic.
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        let _ = (v.as_str(), v.as_bool(), v.as_f64(), v.as_int(), v.raw());
        if let Some(o) = v.as_object() {
            for m in o.iter() {
                let _ = m.raw_key();
                stack.push(m.value);
            }
        } else if let Some(a) = v.as_array() {
            stack.extend(a.iter());
        }
    }
});
