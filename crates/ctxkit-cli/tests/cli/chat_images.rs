//! `ctxkit chat` in tmux: the `read` tool returns an image as an image, fitted to the providers'
//! limits, and the model gets it (over Chat Completions, in a user message after the results);
//! `@image` attaches one fitted the same way.

use std::io::Cursor;

use serde_json::{Value, json};

use crate::chat::{World, text, tmux_missing, tool_call};

fn png(width: u32, height: u32) -> Vec<u8> {
    let image = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(width, height, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 77])
    }));
    let mut bytes = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut bytes), image::ImageFormat::Png)
        .unwrap();
    bytes
}

/// The size of the image a data URL holds.
fn size_of(url: &str) -> (u32, u32) {
    use base64::Engine as _;
    let data = url.split_once(";base64,").unwrap().1;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let image = image::load_from_memory(&bytes).unwrap();
    (image.width(), image.height())
}

#[test]
fn read_returns_a_fitted_image_and_the_model_is_sent_it() {
    if tmux_missing() {
        return;
    }
    let world = World::new(100_000, json!({}));
    // A model the user adds takes text only unless its `input` lists images (as in Pi).
    world.edit_settings(|settings| {
        settings["llm"]["models"][0]["input"] = json!(["text", "image"]);
    });
    std::fs::write(world.project.join("screenshot.png"), png(3200, 1600)).unwrap();
    world.answer(tool_call(
        "call-1",
        "read",
        json!({"path": "screenshot.png"}),
    ));
    world.answer(text("A gradient, 3200 pixels wide.", 400));
    world.answer(text("Both seen.", 500));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("what is in screenshot.png?");
    tmux.wait_for("A gradient, 3200 pixels wide.");
    tmux.wait_idle(2);
    let requests = world.chat_requests();
    let messages = requests[1]["messages"].as_array().unwrap();
    let tool = messages
        .iter()
        .find(|message| message["role"] == "tool")
        .unwrap();
    assert_eq!(
        tool["content"],
        "Read image file [image/jpeg]\n[Image: original 3200x1600, displayed at 2000x1000. \
         Multiply coordinates by 1.60 to map to original image.]"
    );
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    assert_eq!(
        last["content"][0]["text"],
        "Attached image(s) from tool result:"
    );
    let url = last["content"][1]["image_url"]["url"].as_str().unwrap();
    assert_eq!(size_of(url), (2000, 1000));

    // `@` attaches one, fitted the same way.
    std::fs::write(world.project.join("wide.png"), png(4000, 500)).unwrap();
    tmux.line("and @wide.png?");
    tmux.wait_for("Attached wide.png (image 4000x500 sent at 2000x250");
    tmux.wait_for("Both seen.");
    let requests = world.chat_requests();
    let user = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .unwrap()
        .clone();
    let parts = user["content"].as_array().unwrap();
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<file name=\"wide.png\">[Image: original 4000x500"),
        "{user}"
    );
    assert_eq!(
        size_of(parts[1]["image_url"]["url"].as_str().unwrap()),
        (2000, 250)
    );
    tmux.line("/quit");
    drop(tmux);
    // The session keeps the image the model saw.
    let entries = world.entries(&world.session_files()[0]);
    let result: &Value = entries
        .iter()
        .find(|entry| entry["message"]["role"] == "toolResult")
        .unwrap();
    assert_eq!(result["message"]["content"][1]["type"], "image");
    // The smaller encoding of this gradient is JPEG.
    assert_eq!(result["message"]["content"][1]["mimeType"], "image/jpeg");
}

#[test]
fn an_image_attached_for_a_text_only_model_is_said_to_be_left_out() {
    if tmux_missing() {
        return;
    }
    // QA (2026-12-05): only the model was told; the user saw "Attached logo.png (image, …)".
    let world = World::new(100_000, json!({}));
    std::fs::write(world.project.join("logo.png"), png(40, 20)).unwrap();
    world.answer(text("I cannot see it.", 400));
    let tmux = world.start("");
    tmux.wait_idle(1);
    tmux.line("what is @logo.png?");
    tmux.wait_for("takes text only: the model is told an image was left out");
    tmux.wait_for("I cannot see it.");
    let requests = world.chat_requests();
    let sent = requests[0]["messages"].to_string();
    assert!(
        sent.contains("(image omitted: model does not support images)"),
        "{sent}"
    );
    assert!(!sent.contains("image_url"), "{sent}");
    tmux.line("/quit");
}
