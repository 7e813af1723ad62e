//! What the importer reads besides the file, and what it allocates for a file's counts.
//!
//! - External buffers resolve only inside the file's folder by default: an absolute path, a `..`
//!   that leaves the folder and a symbolic link pointing out of it are errors naming the file and
//!   the URI; a subfolder is fine; `ExternalFiles::Anywhere` allows the others, `Never` none.
//! - Counts are checked before anything is allocated: a file of a few hundred bytes claiming four
//!   billion elements is an error at once, and `data:` URIs and files have size limits.

use base64::Engine as _;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wgpu_anim::offline::gltf_import::{self, ExternalFiles, LoadOptions};

/// simple_skin.gltf as JSON, and its one buffer's bytes (embedded there as a data URI).
fn simple_skin() -> (Value, Vec<u8>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/simple_skin/simple_skin.gltf");
    let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let uri = doc["buffers"][0]["uri"].as_str().unwrap();
    let payload = uri.split_once(";base64,").unwrap().1;
    let bin = base64::engine::general_purpose::STANDARD.decode(payload).unwrap();
    (doc, bin)
}

/// A fresh folder for one test: `<tmp>/<name>/outside.bin` beside `<tmp>/<name>/model/`, which
/// holds `sub/inside.bin`.
fn folders(name: &str) -> (PathBuf, Vec<u8>, Value) {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("model/sub")).unwrap();
    let (doc, bin) = simple_skin();
    std::fs::write(root.join("outside.bin"), &bin).unwrap();
    std::fs::write(root.join("model/sub/inside.bin"), &bin).unwrap();
    (root, bin, doc)
}

/// Writes `doc` with its buffer at `uri` as `<root>/model/model.gltf` and loads it.
fn load_with_uri(root: &Path, doc: &Value, uri: &str, options: &LoadOptions) -> Result<(), String> {
    let mut doc = doc.clone();
    doc["buffers"][0]["uri"] = json!(uri);
    let file = root.join("model/model.gltf");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    gltf_import::load_with(&file, options)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[test]
fn external_buffers_stay_inside_the_files_folder() {
    let (root, _, doc) = folders("paths");
    let default = LoadOptions::default();
    // Inside, also in a subfolder (and a `..` that comes back in).
    load_with_uri(&root, &doc, "sub/inside.bin", &default).unwrap();
    load_with_uri(&root, &doc, "sub/../sub/inside.bin", &default).unwrap();

    let absolute = root.join("outside.bin").display().to_string();
    let cases = [
        ("../outside.bin", "leads outside"),
        ("sub/../../outside.bin", "leads outside"),
        (absolute.as_str(), "absolute path"),
        ("https://example.com/x.bin", "URLs"),
    ];
    for (uri, why) in cases {
        let e = load_with_uri(&root, &doc, uri, &default).expect_err(uri);
        assert!(
            e.contains("model.gltf") && e.contains(uri) && e.contains(why),
            "{uri}: {e}"
        );
    }
    #[cfg(unix)]
    {
        // A link inside the folder that points out of it.
        std::os::unix::fs::symlink(root.join("outside.bin"), root.join("model/sub/link.bin")).unwrap();
        let e = load_with_uri(&root, &doc, "sub/link.bin", &default).expect_err("symlink");
        assert!(e.contains("leads outside"), "{e}");
        // A link to a file inside is followed.
        std::os::unix::fs::symlink(root.join("model/sub/inside.bin"), root.join("model/in.bin")).unwrap();
        load_with_uri(&root, &doc, "in.bin", &default).unwrap();
    }

    // Trusted files: anywhere.
    let anywhere = LoadOptions {
        external: ExternalFiles::Anywhere,
        ..LoadOptions::default()
    };
    load_with_uri(&root, &doc, "../outside.bin", &anywhere).unwrap();
    load_with_uri(&root, &doc, &absolute, &anywhere).unwrap();
    // None at all.
    let never = LoadOptions {
        external: ExternalFiles::Never,
        ..LoadOptions::default()
    };
    let e = load_with_uri(&root, &doc, "sub/inside.bin", &never).expect_err("never");
    assert!(e.contains("not read"), "{e}");
}

#[test]
fn bytes_without_a_folder_read_no_external_file() {
    // Before, a relative URI was read from the current directory when no base was given.
    let (root, _, mut doc) = folders("no_base");
    doc["buffers"][0]["uri"] = json!("outside.bin");
    let bytes = serde_json::to_vec(&doc).unwrap();
    std::env::set_current_dir(&root).unwrap();
    let e = gltf_import::load_slice(&bytes, "dropped.gltf", None).expect_err("no folder");
    assert!(e.to_string().contains("no base"), "{e}");
    let anywhere = LoadOptions {
        external: ExternalFiles::Anywhere,
        ..LoadOptions::default()
    };
    let e = gltf_import::load_slice_with(&bytes, "dropped.gltf", None, &anywhere).expect_err("no folder");
    assert!(e.to_string().contains("no base"), "{e}");
    // The parent of a bare file name is the empty path: the current folder.
    gltf_import::load_slice(&bytes, "dropped.gltf", Some(Path::new(""))).unwrap();
    // A pipe inside the folder is not read (it could block for ever).
    #[cfg(unix)]
    {
        let fifo = root.join("pipe.bin");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            doc["buffers"][0]["uri"] = json!("pipe.bin");
            let bytes = serde_json::to_vec(&doc).unwrap();
            let e = gltf_import::load_slice(&bytes, "pipe.gltf", Some(&root)).expect_err("a pipe");
            assert!(e.to_string().contains("not a regular file"), "{e}");
        }
    }
}

#[test]
fn buffers_and_accessors_named_many_times_count_every_time() {
    let (root, bin, mut doc) = folders("many_times");
    // The same 64 KiB file named by 40 buffers, against a budget of 30 of them.
    let mut big = bin.clone();
    big.resize(65536, 0);
    std::fs::write(root.join("model/sub/big.bin"), &big).unwrap();
    let buffer = json!({ "uri": "sub/big.bin", "byteLength": big.len() });
    doc["buffers"] = Value::Array(vec![buffer; 40]);
    let file = root.join("model/many.gltf");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let small = LoadOptions {
        max_file_bytes: 30 * big.len() as u64,
        ..LoadOptions::default()
    };
    let e = gltf_import::load_with(&file, &small).expect_err("40 copies of the buffer");
    assert!(
        e.to_string().contains("byteLength") && e.to_string().contains("max_file_bytes"),
        "{e}"
    );

    // A GLB-style buffer (no uri) other than the first one is not valid glTF.
    let (mut doc, _) = simple_skin();
    doc["buffers"].as_array_mut().unwrap().push(json!({ "byteLength": 4 }));
    let e = gltf_import::load_slice(&serde_json::to_vec(&doc).unwrap(), "second_bin.gltf", None)
        .expect_err("a second binary-chunk buffer");
    assert!(e.to_string().contains("only buffer 0"), "{e}");

    // One sparse accessor of 10 million positions read by 20 primitives: within the limit once,
    // past the import's total the seventh time.
    let primitives: Vec<Value> = (0..20).map(|_| json!({ "attributes": { "POSITION": 0 } })).collect();
    let reused = json!({
        "asset": { "version": "2.0" },
        "buffers": [{ "byteLength": 16, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAAAAAA==" }],
        "bufferViews": [{ "buffer": 0, "byteLength": 16 }],
        "accessors": [{
            "componentType": 5126, "count": 10000000, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 1],
            "sparse": { "count": 1, "indices": { "bufferView": 0, "componentType": 5125 }, "values": { "bufferView": 0, "byteOffset": 4 } }
        }],
        "meshes": [{ "primitives": primitives }],
        "nodes": [{ "mesh": 0 }],
        "scenes": [{ "nodes": [0] }]
    });
    let small = LoadOptions {
        max_accessor_values: 200_000_000,
        ..LoadOptions::default()
    };
    let e = gltf_import::load_slice_with(&serde_json::to_vec(&reused).unwrap(), "reused.gltf", None, &small)
        .expect_err("the accessor read 20 times");
    assert!(e.to_string().contains("max_accessor_values"), "{e}");
}

#[test]
fn huge_counts_are_errors_before_anything_is_allocated() {
    // A 400-byte file whose sparse accessor (no buffer view: all zeros but one) claims
    // 4,000,000,000 three-component positions, 96 GB as the importer's values.
    let tiny = json!({
        "asset": { "version": "2.0" },
        "buffers": [{ "byteLength": 16, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAAAAAA==" }],
        "bufferViews": [{ "buffer": 0, "byteLength": 16 }],
        "accessors": [{
            "componentType": 5126, "count": 4000000000u64, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 1],
            "sparse": { "count": 1, "indices": { "bufferView": 0, "componentType": 5125 }, "values": { "bufferView": 0, "byteOffset": 4 } }
        }],
        "meshes": [{ "primitives": [{ "attributes": { "POSITION": 0 } }] }],
        "nodes": [{ "mesh": 0 }],
        "scenes": [{ "nodes": [0] }]
    });
    let bytes = serde_json::to_vec(&tiny).unwrap();
    assert!(bytes.len() < 600, "{} bytes", bytes.len());
    let start = std::time::Instant::now();
    let e = gltf_import::load_slice(&bytes, "tiny.gltf", None).expect_err("four billion positions");
    assert!(e.to_string().contains("max_accessor_values"), "{e}");
    // No time or memory spent on the claim (a loose bound: this is not a timing test).
    assert!(start.elapsed().as_secs() < 5);

    // A data URI over its limit, and an external file over its limit.
    let (root, bin, doc) = folders("limits");
    let small = LoadOptions {
        max_data_uri_bytes: bin.len() / 2,
        ..LoadOptions::default()
    };
    let e = gltf_import::load_slice_with(&serde_json::to_vec(&doc).unwrap(), "uri.gltf", None, &small)
        .expect_err("data URI over the limit");
    assert!(e.to_string().contains("max_data_uri_bytes"), "{e}");
    let small = LoadOptions {
        max_file_bytes: 4096 + bin.len() as u64 - 1,
        ..LoadOptions::default()
    };
    let mut big = doc.clone();
    big["buffers"][0]["byteLength"] = json!(4096 + bin.len());
    let e = load_with_uri(&root, &big, "sub/inside.bin", &small).expect_err("buffer over the limit");
    assert!(e.contains("byteLength") && e.contains("max_file_bytes"), "{e}");
}
