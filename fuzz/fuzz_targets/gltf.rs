//! glTF JSON (and anything else) through the importer: an error or an import, never a panic.
//! Seed corpus: the `.gltf` files under `assets/` (`fuzz/corpus/gltf`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    // No base folder: no external file is read, so runs stay independent of the disk.
    let _ = wgpu_anim::offline::gltf_import::load_slice(bytes, "fuzz.gltf", None);
});
