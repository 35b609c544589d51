//! A wire message's Open Responses items (the mapping of
//! [`items_of`](crate::convert::chat::items_of)) written in canonical form
//! (RFC 8785) straight from its [`WireShape`]: the same bytes as building
//! the wire message, its items, and canonicalising each, with neither
//! built. Every member is a string the message holds, so every item has a
//! canonical form.

use crate::json::write::write_str;
use crate::openhands::view::{Role, ThinkingBlock, WireContent, WirePart, WireShape};

/// A JSON string as the canonical form writes it.
fn w_str(out: &mut Vec<u8>, s: &str) {
    write_str(out, s, false);
}

/// A thinking block kept whole as an `openhands:part` (before 1.2.0 the
/// SDK sends it among the content parts): `part`, `type`; the part is the
/// block as the SDK dumps it (`signature`, `thinking`, `type`, or `data`,
/// `type`).
fn thinking_part(out: &mut Vec<u8>, b: &ThinkingBlock<'_>) {
    out.extend_from_slice(b"{\"part\":");
    match b {
        ThinkingBlock::Thinking {
            thinking,
            signature,
        } => {
            out.extend_from_slice(b"{\"signature\":");
            match signature {
                Some(s) => w_str(out, s),
                None => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(b",\"thinking\":");
            w_str(out, thinking);
            out.extend_from_slice(b",\"type\":\"thinking\"}");
        }
        ThinkingBlock::Redacted { data } => {
            out.extend_from_slice(b"{\"data\":");
            w_str(out, data);
            out.extend_from_slice(b",\"type\":\"redacted_thinking\"}");
        }
    }
    out.extend_from_slice(b",\"type\":\"openhands:part\"}");
}

/// A content part as a Responses part: a text part as `output_text` in
/// the model's own message (`output`: `annotations`, `text`, `type`), else
/// as `input_text` (`text`, `type`); an image as `input_image`
/// (`image_url`, `type`); a thinking block kept whole.
fn part(out: &mut Vec<u8>, p: &WirePart<'_>, output: bool) {
    match p {
        WirePart::Text { text, .. } if output => {
            out.extend_from_slice(b"{\"annotations\":[],\"text\":");
            w_str(out, text);
            out.extend_from_slice(b",\"type\":\"output_text\"}");
        }
        WirePart::Text { text, .. } => {
            out.extend_from_slice(b"{\"text\":");
            w_str(out, text);
            out.extend_from_slice(b",\"type\":\"input_text\"}");
        }
        WirePart::Image { url, .. } => {
            out.extend_from_slice(b"{\"image_url\":");
            w_str(out, url);
            out.extend_from_slice(b",\"type\":\"input_image\"}");
        }
        WirePart::Thinking(b) => thinking_part(out, b),
    }
}

/// The content as a list of [`part`]s (`output`: the model's own
/// message), a string kept a string, `[]` when there is none.
fn content(out: &mut Vec<u8>, c: &WireContent<'_>, output: bool) {
    match c {
        WireContent::Parts(parts) => {
            out.push(b'[');
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                part(out, p, output);
            }
            out.push(b']');
        }
        WireContent::Text(t) => w_str(out, t),
        WireContent::None => out.extend_from_slice(b"[]"),
    }
}

/// Writes each item of the wire message `shape` into `buf` (cleared first)
/// and gives it to `each` with the `call_id` of a `function_call`: for an
/// assistant turn a `reasoning` item per thinking block, a `message` for
/// its content, a `function_call` per call; for a tool result its
/// `function_call_output`; else a `message`.
pub(super) fn shape_items<E>(
    shape: &WireShape<'_>,
    buf: &mut Vec<u8>,
    mut each: impl FnMut(&[u8], Option<&str>) -> Result<(), E>,
) -> Result<(), E> {
    let c = buf;
    match shape.role {
        Role::Assistant => {
            // `content`, `encrypted_content`, `summary`, `type`.
            for b in shape.thinking {
                c.clear();
                c.push(b'{');
                match b {
                    ThinkingBlock::Redacted { data } => {
                        c.extend_from_slice(b"\"encrypted_content\":");
                        w_str(c, data);
                    }
                    ThinkingBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        c.extend_from_slice(b"\"content\":[{\"text\":");
                        w_str(c, thinking);
                        c.extend_from_slice(b",\"type\":\"reasoning_text\"}]");
                        if let Some(sig) = signature {
                            c.extend_from_slice(b",\"encrypted_content\":");
                            w_str(c, sig);
                        }
                    }
                }
                c.extend_from_slice(b",\"summary\":[],\"type\":\"reasoning\"}");
                each(c, None)?;
            }
            // `content`, `role`, `type`.
            if !matches!(shape.content, WireContent::None) {
                c.clear();
                c.extend_from_slice(b"{\"content\":");
                content(c, &shape.content, true);
                c.extend_from_slice(b",\"role\":\"assistant\",\"type\":\"message\"}");
                each(c, None)?;
            }
            // `arguments`, `call_id`, `name`, `type`.
            for call in shape.tool_calls.unwrap_or_default() {
                c.clear();
                c.extend_from_slice(b"{\"arguments\":");
                w_str(c, &call.arguments);
                c.extend_from_slice(b",\"call_id\":");
                w_str(c, &call.id);
                c.extend_from_slice(b",\"name\":");
                w_str(c, &call.name);
                c.extend_from_slice(b",\"type\":\"function_call\"}");
                each(c, Some(&call.id))?;
            }
            Ok(())
        }
        Role::Tool => {
            // `call_id`, `output`, `type`.
            c.clear();
            c.extend_from_slice(b"{\"call_id\":");
            w_str(c, shape.tool.map_or("", |(id, _)| id));
            c.extend_from_slice(b",\"output\":");
            content(c, &shape.content, false);
            c.extend_from_slice(b",\"type\":\"function_call_output\"}");
            each(c, None)
        }
        Role::System | Role::User => {
            // `content`, `role`, `type`.
            c.clear();
            c.extend_from_slice(b"{\"content\":");
            content(c, &shape.content, false);
            c.extend_from_slice(b",\"role\":");
            w_str(c, shape.role.as_str());
            c.extend_from_slice(b",\"type\":\"message\"}");
            each(c, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asf::canon::to_canonical;
    use crate::convert::chat::items_of;
    use crate::json::OwnedValue;
    use crate::openhands::view::message_tests::{wire_cases, wire_examples};
    use crate::openhands::view::{
        Message, View, ViewInput, ViewOptions, to_wire_values, wire_shapes,
    };

    /// Items as their canonical text and `call_id`s.
    type Written = Vec<(String, Option<String>)>;

    /// Each wire message's items written from its shape against the items
    /// of its value canonicalised, for every combination of the wire
    /// options and the versions where the wire form changes.
    fn check(messages: &[Message<'_>]) {
        for (version, o) in wire_cases() {
            let values = to_wire_values(messages, &o, version);
            let shapes = wire_shapes(messages, &o, version);
            assert_eq!(values.len(), shapes.len());
            for (i, (v, shape)) in values.iter().zip(&shapes).enumerate() {
                let want: Written = items_of(v)
                    .iter()
                    .map(|item| {
                        let call = (item.get("type").and_then(OwnedValue::as_str)
                            == Some("function_call"))
                        .then(|| item.get("call_id").and_then(OwnedValue::as_str))
                        .flatten()
                        .map(str::to_owned);
                        let c = to_canonical(item).expect("an item of strings is canonical");
                        (String::from_utf8(c).expect("UTF-8"), call)
                    })
                    .collect();
                let mut got: Written = Vec::new();
                shape_items(shape, &mut Vec::new(), |c, call| {
                    let text = String::from_utf8_lossy(c).into_owned();
                    got.push((text, call.map(str::to_owned)));
                    Ok::<(), ()>(())
                })
                .expect("written");
                assert_eq!(got, want, "message {i}, {o:?}, {version:?}");
            }
        }
    }

    #[test]
    fn items_of_shapes_are_the_items_of_the_wire_values() {
        let messages = wire_examples();
        check(&messages);
        check(&messages[1..]);
        for conv in crate::openhands::test_corpus::conversations() {
            let view = View::build(
                &ViewInput::from_conversation(&conv),
                &ViewOptions::default(),
            );
            check(view.messages());
        }
    }
}
