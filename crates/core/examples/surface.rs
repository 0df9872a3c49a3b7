//! Prints the generated files of the public surface as JSON, `{"<path>": "<text>", …}`, for
//! `scripts/surface.mjs`, which formats them and writes or checks them.

fn main() {
    let files: serde_json::Map<String, serde_json::Value> =
        rennet_codex::surface::files().into_iter().map(|f| (f.path.to_string(), f.text.into())).collect();
    println!("{}", serde_json::Value::Object(files));
}
