//! GLB containers through the importer: the input is split into a JSON chunk and a binary chunk
//! and wrapped in a valid GLB header, so that mutations reach the chunks' contents as well as the
//! container (the `gltf` target feeds raw bytes, headers included).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&split, rest)) = bytes.split_first() else {
        return;
    };
    let at = (usize::from(split) * rest.len() / 255).min(rest.len());
    let (json, bin) = rest.split_at(at);
    let pad = |chunk: &[u8], fill: u8| {
        let mut v = chunk.to_vec();
        v.resize(chunk.len().next_multiple_of(4), fill);
        v
    };
    let (json, bin) = (pad(json, b' '), pad(bin, 0));
    let mut glb = Vec::with_capacity(28 + json.len() + bin.len());
    let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    glb.extend_from_slice(b"glTF");
    glb.extend_from_slice(&2u32.to_le_bytes());
    glb.extend_from_slice(&(total as u32).to_le_bytes());
    glb.extend_from_slice(&(json.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&json);
    if !bin.is_empty() {
        glb.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        glb.extend_from_slice(b"BIN\0");
        glb.extend_from_slice(&bin);
    }
    if let Ok(imported) = wgpu_anim::offline::gltf_import::load_slice(&glb, "fuzz.glb", None) {
        check_accepted(&imported);
    }
});

/// Accepted means within reach: a file whose library builds gives, at three times of every
/// clip, model, skinning and socket matrices and skinned vertices that are finite and within
/// `reach::MAX_REACH` (`Imported::check_poses`).
fn check_accepted(imported: &wgpu_anim::offline::gltf_import::Imported) {
    if let Ok(library) = imported.build_library() {
        if let Err(e) = imported.check_poses(&library, 3) {
            panic!("an accepted file gave a pose beyond reach: {e}");
        }
    }
}
