//! glTF JSON (and anything else) through the importer: an error or an import, never a panic;
//! and every pose an accepted file gives is finite and within reach.
//! Seed corpus: the `.gltf` files under `assets/` (`fuzz/corpus/gltf`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    // No base folder: no external file is read, so runs stay independent of the disk.
    if let Ok(imported) = wgpu_anim::offline::gltf_import::load_slice(bytes, "fuzz.gltf", None) {
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
