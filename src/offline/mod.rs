//! The offline half: authoring work done once, before a library plays — as ozz-animation's
//! `offline/` and ACL's compression. The runtime half (the library as uploaded, the animator,
//! the CPU mirrors, the renderers, the codec's decoder) never imports anything from here; a test
//! (`tests/architecture.rs`) fails on an arrow from there to here.
//!
//! - [`builder`]: [`LibraryBuilder`] validates authoring data and packs
//!   it into an [`AnimationLibrary`](crate::AnimationLibrary).
//! - [`compress`]: the clip compressor (its blob decodes on the GPU: [`crate::codec`]).
//! - [`compressed_file`]: compressed clips in a file of their own.
//! - [`decompress`]: a compressed clip decoded in f64, the accuracy oracle of the GPU's decode.
//! - [`key_reduction`]: the keys a clip's interpolation reproduces within a tolerance, removed.
//! - [`root_motion`]: root motion extracted from a clip.
//! - [`layers`]: difference clips for additive layers, and masks.
//! - [`retarget`]: one skeleton's clips as clips of another (bone maps, the hip-height ratio).
//! - [`vat`]: vertex animation textures baked from a mesh's clips.
//! - `gltf_import` (feature `gltf`): glTF 2.0 characters.
//! - `gltf_export` (feature `gltf`): a skeleton, its meshes and clips written as `.glb`.

pub mod builder;
pub mod compress;
pub mod compressed_file;
pub mod decompress;
#[cfg(feature = "gltf")]
pub mod gltf_export;
#[cfg(feature = "gltf")]
pub mod gltf_import;
pub mod key_reduction;
pub mod layers;
pub mod retarget;
pub mod root_motion;
pub mod vat;

pub use builder::LibraryBuilder;
