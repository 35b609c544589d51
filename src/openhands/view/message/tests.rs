use super::*;

fn user(text: &str) -> Message<'_> {
    let mut m = Message::new(Role::User);
    m.content.push(Content::text(text));
    m
}

#[test]
fn dump_fields_follow_the_version() {
    let m = user("hi");
    let old = m.to_sdk_value(SdkVersion::V1_0_0);
    assert!(old.get("cache_enabled").is_some());
    assert!(old.get("send_reasoning_content").is_none());
    let mid = m.to_sdk_value(SdkVersion::new(1, 7, 4));
    assert!(mid.get("send_reasoning_content").is_some());
    let part = &mid.get("content").and_then(|c| c.as_array()).unwrap()[0];
    assert_eq!(part.get("enable_truncation"), Some(&OwnedValue::Bool(true)));
    let new = m.to_sdk_value(SdkVersion::LATEST);
    assert!(new.get("cache_enabled").is_none());
    assert_eq!(new.get("tool_calls"), Some(&OwnedValue::Null));
}

#[test]
fn wire_string_and_list_forms() {
    let mut m = user("a");
    m.content.push(Content::text("b"));
    let msgs = [m];
    let list = to_wire_values(
        &msgs,
        &WireOptions {
            function_calling: true,
            ..Default::default()
        },
        SdkVersion::LATEST,
    );
    assert_eq!(
        list[0]
            .get("content")
            .and_then(|c| c.as_array())
            .map(Vec::len),
        Some(2)
    );
    let string = to_wire_values(&msgs, &WireOptions::default(), SdkVersion::LATEST);
    assert_eq!(
        string[0].get("content").and_then(OwnedValue::as_str),
        Some("a\nb")
    );
}

#[test]
fn prompt_caching_marks_system_and_last_user_turn() {
    let mut sys = Message::new(Role::System);
    sys.content.push(Content::text("static"));
    sys.content.push(Content::text("dynamic"));
    let msgs = [sys, user("q1"), user("q2")];
    let o = WireOptions {
        prompt_caching: true,
        function_calling: true,
        ..Default::default()
    };
    let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
    let parts = |i: usize| w[i].get("content").and_then(|c| c.as_array()).unwrap();
    assert!(parts(0)[0].get("cache_control").is_some());
    assert!(parts(0)[1].get("cache_control").is_none());
    assert!(parts(1)[0].get("cache_control").is_none());
    assert!(parts(2)[0].get("cache_control").is_some());
    // Before 1.11.3 the last system block was marked.
    let w = to_wire_values(&msgs, &o, SdkVersion::V1_10_0);
    let parts = w[0].get("content").and_then(|c| c.as_array()).unwrap();
    assert!(parts[0].get("cache_control").is_none());
    assert!(parts[1].get("cache_control").is_some());
}

#[test]
fn tool_call_turn_drops_blank_text_from_1_1() {
    let mut m = Message::new(Role::Assistant);
    m.content.push(Content::text("  "));
    m.tool_calls = Some(vec![ToolCall {
        id: "c1".into(),
        name: "t".into(),
        arguments: "{}".into(),
        origin: "completion".into(),
        responses_item_id: None,
    }]);
    let o = WireOptions {
        function_calling: true,
        ..Default::default()
    };
    let msgs = [m];
    let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
    assert!(w[0].get("content").is_none());
    let w = to_wire_values(&msgs, &o, SdkVersion::V1_0_0);
    assert!(w[0].get("content").is_some());
}

fn fc() -> WireOptions {
    WireOptions {
        function_calling: true,
        ..Default::default()
    }
}

#[test]
fn thinking_blocks_placement_by_version() {
    let mut m = Message::new(Role::Assistant);
    m.content.push(Content::text("answer"));
    m.thinking_blocks.push(ThinkingBlock::Thinking {
        thinking: "t".into(),
        signature: None,
    });
    m.thinking_blocks
        .push(ThinkingBlock::Redacted { data: "d".into() });
    let msgs = [m];
    // 1.0.x–1.1.x: inside the content list, before the text.
    let w = to_wire_values(&msgs, &fc(), SdkVersion::V1_1_0);
    let parts = w[0].get("content").and_then(|c| c.as_array()).unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(
        parts[0].get("type").and_then(OwnedValue::as_str),
        Some("thinking")
    );
    assert_eq!(parts[0].get("signature"), Some(&OwnedValue::Null));
    assert!(w[0].get("thinking_blocks").is_none());
    // 1.2.0+: their own key.
    let w = to_wire_values(&msgs, &fc(), SdkVersion::V1_2_0);
    assert_eq!(
        w[0].get("content").and_then(|c| c.as_array()).map(Vec::len),
        Some(1)
    );
    assert_eq!(
        w[0].get("thinking_blocks")
            .and_then(|c| c.as_array())
            .map(Vec::len),
        Some(2)
    );
    // Not for the string serializer.
    let w = to_wire_values(&msgs, &WireOptions::default(), SdkVersion::LATEST);
    assert!(w[0].get("thinking_blocks").is_none());
}

#[test]
fn images_need_vision_and_tool_cache_moves_to_the_message() {
    let mut t = Message::new(Role::Tool);
    t.tool_call_id = Some("c".into());
    t.name = Some("file_editor".into());
    t.content.push(Content::text("img"));
    t.content.push(Content::Image(ImageContent {
        image_urls: vec!["data:image/png;base64,AAAA".into(), "http://x/y.png".into()],
        cache_prompt: false,
    }));
    let msgs = [t];
    let w = to_wire_values(&msgs, &fc(), SdkVersion::LATEST);
    assert_eq!(
        w[0].get("content").and_then(|c| c.as_array()).map(Vec::len),
        Some(1)
    );
    let o = WireOptions {
        vision: true,
        prompt_caching: true,
        ..fc()
    };
    let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
    let parts = w[0].get("content").and_then(|c| c.as_array()).unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(
        parts[2]
            .get("image_url")
            .and_then(|u| u.get("url"))
            .and_then(OwnedValue::as_str),
        Some("http://x/y.png")
    );
    // The last tool turn's breakpoint is on the message, not the part.
    assert!(parts.iter().all(|p| p.get("cache_control").is_none()));
    assert!(w[0].get("cache_control").is_some());
    assert_eq!(
        w[0].get("name").and_then(OwnedValue::as_str),
        Some("file_editor")
    );
}

#[test]
fn reasoning_content_and_empty_assistant_content() {
    let mut m = Message::new(Role::Assistant);
    m.reasoning_content = Some("why".into());
    let msgs = [m];
    let o = WireOptions {
        send_reasoning_content: true,
        ..fc()
    };
    let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
    assert_eq!(
        w[0].get("reasoning_content").and_then(OwnedValue::as_str),
        Some("why")
    );
    // 1.29.0+ sends an empty plain assistant content as "".
    assert_eq!(w[0].get("content").and_then(OwnedValue::as_str), Some(""));
    let w = to_wire_values(&msgs, &o, SdkVersion::new(1, 28, 1));
    assert_eq!(
        w[0].get("content").and_then(|c| c.as_array()).map(Vec::len),
        Some(0)
    );
    // 1.0.x never sends reasoning content.
    let w = to_wire_values(&msgs, &o, SdkVersion::V1_0_0);
    assert!(w[0].get("reasoning_content").is_none());
    // Without the model flag, not sent.
    let w = to_wire_values(&msgs, &fc(), SdkVersion::LATEST);
    assert!(w[0].get("reasoning_content").is_none());
}

#[test]
fn dumps_of_calls_blocks_and_reasoning_items() {
    let mut m = Message::new(Role::Assistant);
    m.tool_calls = Some(vec![ToolCall {
        id: "c".into(),
        name: "n".into(),
        arguments: "{}".into(),
        origin: "responses".into(),
        responses_item_id: Some("fc_1".into()),
    }]);
    m.responses_reasoning_item = Some(ReasoningItem {
        id: Some("rs".into()),
        summary: vec!["s".into()],
        ..Default::default()
    });
    let new = m.to_sdk_value(SdkVersion::LATEST);
    let call = &new.get("tool_calls").and_then(|c| c.as_array()).unwrap()[0];
    assert_eq!(
        call.get("responses_item_id").and_then(OwnedValue::as_str),
        Some("fc_1")
    );
    let old = m.to_sdk_value(SdkVersion::new(1, 18, 0));
    let call = &old.get("tool_calls").and_then(|c| c.as_array()).unwrap()[0];
    assert!(call.get("responses_item_id").is_none());
    let item = new.get("responses_reasoning_item").unwrap();
    assert_eq!(item.get("content"), Some(&OwnedValue::Null));
    assert_eq!(item.get("status"), Some(&OwnedValue::Null));
}

#[test]
fn tool_text_truncated_only_for_tool_role_from_1_11_1() {
    let long = "x".repeat(TEXT_CONTENT_LIMIT + 10);
    let mut t = Message::new(Role::Tool);
    t.content.push(Content::text(long.as_str()));
    t.tool_call_id = Some("c".into());
    t.name = Some("n".into());
    let u = user(&long);
    let o = WireOptions {
        function_calling: true,
        ..Default::default()
    };
    let msgs = [t, u];
    let w = to_wire_values(&msgs, &o, SdkVersion::LATEST);
    let text = |i: usize| {
        w[i].get("content").and_then(|c| c.as_array()).unwrap()[0]
            .get("text")
            .and_then(OwnedValue::as_str)
            .unwrap()
            .chars()
            .count()
    };
    assert_eq!(text(0), TEXT_CONTENT_LIMIT);
    assert_eq!(text(1), TEXT_CONTENT_LIMIT + 10);
    let w = to_wire_values(&msgs, &o, SdkVersion::V1_0_0);
    let t1 = w[1].get("content").and_then(|c| c.as_array()).unwrap()[0]
        .get("text")
        .and_then(OwnedValue::as_str)
        .unwrap()
        .chars()
        .count();
    assert_eq!(t1, TEXT_CONTENT_LIMIT);
}

/// Every combination of the wire options, under each version where the
/// wire form changes.
pub(crate) fn wire_cases() -> impl Iterator<Item = (SdkVersion, WireOptions)> {
    let versions = [
        SdkVersion::V1_0_0,
        SdkVersion::V1_1_0,
        SdkVersion::V1_2_0,
        SdkVersion::V1_6_0,
        SdkVersion::V1_11_1,
        SdkVersion::V1_11_3,
        SdkVersion::V1_29_0,
        SdkVersion::LATEST,
    ];
    versions.into_iter().flat_map(|version| {
        (0u8..32).map(move |bits| {
            let o = WireOptions {
                prompt_caching: bits & 1 != 0,
                vision: bits & 2 != 0,
                function_calling: bits & 4 != 0,
                force_string_serializer: bits & 8 != 0,
                send_reasoning_content: bits & 16 != 0,
            };
            (version, o)
        })
    })
}

/// Every wire message written straight against its value written by
/// `OwnedValue::write_to_finding` (bytes, the `tool_calls` range, and the
/// members `get` answers), for every combination of the wire options and
/// the versions where the wire form changes.
#[cfg(feature = "parquet")]
pub(crate) fn check_written_wire(messages: &[Message<'_>]) {
    use crate::json::Style;
    for (version, o) in wire_cases() {
        let values = to_wire_values(messages, &o, version);
        let mut seen = 0;
        write_wire_messages(messages, &o, version, |i, line, facts| {
            let v = &values[i];
            let mut want = Vec::new();
            let calls = v.write_to_finding(&mut want, Style::COMPACT, "tool_calls");
            assert_eq!(
                String::from_utf8_lossy(line),
                String::from_utf8_lossy(&want),
                "message {i}, {o:?}, {version:?}"
            );
            assert_eq!(facts.tool_calls, calls);
            let text = v.get("content").and_then(|c| match c {
                OwnedValue::String(s) => Some(s.clone()),
                OwnedValue::Array(a) => Some(
                    a.iter()
                        .filter_map(|p| p.get("text").and_then(OwnedValue::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                _ => None,
            });
            assert_eq!(facts.text.as_deref(), text.as_deref());
            let s = |k: &str| v.get(k).and_then(OwnedValue::as_str);
            assert_eq!(Some(facts.role.as_str()), s("role"));
            assert_eq!(facts.tool_call_id, s("tool_call_id"));
            assert_eq!(facts.name, s("name"));
            seen += 1;
            Ok::<(), ()>(())
        })
        .expect("written");
        assert_eq!(seen, values.len());
    }
}

/// Messages that take every branch of the wire rules: cache marks on the
/// system prompt, images and a tool turn, thinking blocks and reasoning
/// content, blank text beside tool calls, empty assistant turns, tool
/// output past the truncation limit, a tool result with no name.
pub(crate) fn wire_examples() -> Vec<Message<'static>> {
    let call = |id: &'static str| ToolCall {
        id: id.into(),
        name: "terminal".into(),
        arguments: "{\"command\": \"ls\\n\"}".into(),
        origin: "completion".into(),
        responses_item_id: None,
    };
    let mut system = Message::new(Role::System);
    system.content.push(Content::text("You are \"helpful\"."));
    system.content.push(Content::Text(TextContent {
        text: "dynamic".into(),
        cache_prompt: true,
        enable_truncation: Some(false),
    }));
    let mut image_user = user("look");
    image_user.content.push(Content::Image(ImageContent {
        image_urls: vec![
            "data:image/png;base64,AA==".into(),
            "https://x/y.png".into(),
        ],
        cache_prompt: true,
    }));
    image_user.content.push(Content::Image(ImageContent {
        image_urls: Vec::new(),
        cache_prompt: false,
    }));
    let mut thinking = Message::new(Role::Assistant);
    thinking.content.push(Content::text("  \n"));
    thinking.content.push(Content::text("planning"));
    thinking.tool_calls = Some(vec![call("c1"), call("c2")]);
    thinking.reasoning_content = Some("because".into());
    thinking.thinking_blocks = vec![
        ThinkingBlock::Thinking {
            thinking: "hmm".into(),
            signature: Some("sig".into()),
        },
        ThinkingBlock::Redacted { data: "xx".into() },
        ThinkingBlock::Thinking {
            thinking: "unsigned \"quoted\"".into(),
            signature: None,
        },
    ];
    let mut blank_calls = Message::new(Role::Assistant);
    blank_calls.content.push(Content::text(" "));
    blank_calls.tool_calls = Some(vec![call("c3")]);
    let empty_assistant = Message::new(Role::Assistant);
    let mut empty_calls = Message::new(Role::Assistant);
    empty_calls.tool_calls = Some(Vec::new());
    let mut tool = Message::new(Role::Tool);
    tool.content
        .push(Content::text("x".repeat(TEXT_CONTENT_LIMIT + 7)));
    tool.content.push(Content::Image(ImageContent {
        image_urls: vec!["data:image/png;base64,BB==".into()],
        cache_prompt: true,
    }));
    tool.tool_call_id = Some("c1".into());
    tool.name = Some("terminal".into());
    let mut nameless_tool = Message::new(Role::Tool);
    nameless_tool.content.push(Content::text("é\u{1}\t"));
    nameless_tool.tool_call_id = Some("c2".into());
    let mut long_user = user("y");
    long_user.content[0] = Content::Text(TextContent {
        text: "z".repeat(TEXT_CONTENT_LIMIT + 3).into(),
        cache_prompt: false,
        enable_truncation: Some(true),
    });
    vec![
        system,
        image_user,
        thinking,
        blank_calls,
        empty_assistant,
        empty_calls,
        tool,
        nameless_tool,
        long_user,
        user("last"),
    ]
}

#[test]
#[cfg(feature = "parquet")]
fn wire_messages_written_as_their_values() {
    let messages = wire_examples();
    check_written_wire(&messages);
    check_written_wire(&messages[1..]);
    check_written_wire(&[]);
}
