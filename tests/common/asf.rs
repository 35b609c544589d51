//! Agent Session Format test material built from the reference fixtures.

use std::path::PathBuf;

use agentlog::asf::canon::to_canonical;
use agentlog::asf::hash::{envelope_bytes, sha256_ref};
use agentlog::json::OwnedValue;

/// The path of the reference fixture session `name`.
pub fn fixture(name: &str) -> PathBuf {
    super::data_dir()
        .join("asf/sessions")
        .join(format!("{name}.jsonl"))
}

/// The `fork` fixture with its last entry, a leaf `response`, carrying
/// `request_hash` instead of its own and a new `id` that matches the new
/// body: a file whose entries all verify and whose last request hash does
/// not. Returns the text and the number of that last line.
pub fn fork_with_request_hash(request_hash: &str) -> (String, usize) {
    let text = std::fs::read_to_string(fixture("fork")).expect("fixture");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = lines.len() - 1;
    let mut entry = OwnedValue::parse(lines[last].as_bytes()).unwrap();
    let map = entry.as_object_mut().unwrap();
    assert_eq!(map.get("type").unwrap().as_str(), Some("response"));
    assert!(map.get("parents").is_none());
    map.insert("request_hash", OwnedValue::string(request_hash));
    // The content hash covers every member but the envelope's.
    let mut body = map.clone();
    for k in ["id", "parent", "parents", "ts", "type"] {
        body.remove(k);
    }
    let content = sha256_ref(&to_canonical(&OwnedValue::Object(body)).unwrap());
    let mut envelope = Vec::new();
    envelope_bytes(
        &mut envelope,
        "response",
        map.get("parent").and_then(OwnedValue::as_str),
        None,
        map.get("ts").unwrap().as_str().unwrap(),
        &content,
    );
    map.insert("id", OwnedValue::string(sha256_ref(&envelope)));
    lines[last] = String::from_utf8(to_canonical(&entry).unwrap()).unwrap();
    (format!("{}\n", lines.join("\n")), lines.len())
}
