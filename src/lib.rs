//! # wgpu-anim
//!
//! Skeletal animation for crowds of skinned characters, evaluated entirely on the GPU with wgpu.
//!
//! A frame flows one way: **instance state → clock → sample → local_to_model → palette → skin**.
//! `clock` advances every character's clocks and evaluates its blend tree, cross-fade and layers
//! into a list of weighted clip samples; `sample` samples and blends them per joint;
//! `local_to_model` propagates the hierarchy (applying mesh-space additive layers); `palette`
//! builds the skinning matrices; a vertex shader skins. The fused path runs the first four in one
//! dispatch.
//!
//! Two halves, one way: [`offline`] — the library builder, the clip compressor, root-motion
//! extraction, difference clips and masks, the glTF importer — turns authoring data into an
//! [`AnimationLibrary`]; the runtime — [`library`], [`layout`], [`gpu`], [`cpu`], [`shaders`] and
//! the [`codec`]'s decoder — plays it and never imports the offline half (`tests/architecture.rs`
//! checks it). The [`guide`] tells how to embed the library, how a frame flows, how it is tested,
//! how clips are compressed and how fast it runs.
//!
//! - Authoring data — [`Skeleton`], [`Clip`], [`SkinnedMesh`], [`blend::BlendTree`], masks and
//!   difference clips from [`offline::layers`] — is validated and packed by [`LibraryBuilder`] into an
//!   [`AnimationLibrary`]: flat arrays, the exact bytes the GPU reads.
//! - [`Animator`] takes *your* `wgpu::Device`, uploads the library once, keeps every instance's
//!   parameters and clocks in GPU buffers and records the compute passes into *your* encoder with
//!   [`Animator::encode`]. Its palette buffer holds every instance's skinning matrices.
//! - [`SkinnedRenderer`] draws all instances of a mesh with one instanced draw; or skin in your own
//!   vertex shader with [`gpu::SkinBinding`] and its WGSL module.
//! - Sockets ([`Skeleton::add_socket`]) follow joints: the palette pass writes their world
//!   matrices beside the palettes ([`Animator::socket_slot`]), [`gpu::PropRenderer`] draws props
//!   in them, and [`Animator::watch_sockets`] reads chosen ones back every frame without waiting.
//! - Clip events ([`ClipEvent`]) fire on the GPU: with [`Animator::watch_events`] the clock
//!   stage appends a record for each event a character's playback crossed, exactly once, to a log
//!   read back through the same ring (or consumed on the GPU, as the crowd scene's footprints,
//!   `gpu::Footprints` with feature `scene`, do).
//! - Root motion ([`offline::root_motion`], [`LibraryBuilder::add_clip_with_root_motion`]) moves a
//!   character's world transform on the GPU ([`gpu::Controller::set_root_motion`]); float curves
//!   ([`FloatCurve`]) are blended per character; both land in each character's
//!   [`layout::GpuOutput`], read back with [`Animator::watch_outputs`].
//! - When the device is lost, [`Animator::rebuild`] makes the animator again on a new one, from
//!   what [`Animator::set_recovery`] kept, and it carries on where it was.
//! - [`cpu`] mirrors every GPU stage in Rust (same bytes, same order of operations) and
//!   [`mod@reference`] is an f64 implementation used as the accuracy oracle.
//! - [`mannequin`] builds the built-in humanoid, its mesh, its clips, a locomotion blend space and
//!   layer assets in code; `offline::gltf_import` loads glTF 2.0 characters (feature `gltf`).
//!
//! ## Features
//!
//! - `gltf` (on by default): `offline::gltf_import`, the glTF 2.0 importer (with `gltf`, `serde_json` and
//!   `base64`).
//! - `scene`: `scene`, a ready crowd of wandering characters on a ground plane, used by the
//!   demos and the examples, on wgpu alone (the web demo builds with it).
//! - `tools` (on by default, implies `gltf` and `scene`): the `wgpu-anim` command-line tool (with
//!   `clap`), `bench` (the frame benchmark, its JSON rows and its plot, drawn with `plotters`) and
//!   `image` (PNG files).
//!
//! The runtime builds for `wasm32-unknown-unknown` and runs on WebGPU in a browser: what waits for
//! the device there is `async` (`Animator::new_async`, `gpu::read_buffer_async`, ...), natively
//! also reachable by its blocking name ([`guide::embedding`], "In a browser").
//!
//! A renderer that depends on `wgpu-anim` with `default-features = false` gets the runtime — the
//! animator, the renderer, the CPU mirrors and the f64 reference — with the mannequin and the
//! offline half except the glTF importer, on wgpu, naga (with naga_oil for shader composition), glam
//! and bytemuck.

#[cfg(feature = "tools")]
pub mod bench;
pub mod blend;
pub mod clip;
pub mod codec;
pub mod cpu;
pub mod error;
pub mod gpu;
pub mod guide;
pub mod id;
pub mod ik;
#[cfg(feature = "tools")]
pub mod image;
pub mod layout;
pub mod library;
pub mod machine;
pub mod mannequin;
pub mod math;
pub mod mesh;
pub mod morph;
pub mod offline;
pub mod reach;
pub mod reference;
#[cfg(feature = "scene")]
pub mod scene;
pub mod shaders;
pub mod skeleton;
#[cfg(all(feature = "testing", not(target_arch = "wasm32")))]
pub mod testing;
pub mod vat;

pub use clip::{Clip, ClipEvent, FloatCurve, Interpolation, JointTrack, Track};
pub use error::{Channel, Error, Result};
pub use gpu::{Animator, AnimatorDesc, InstanceDesc, LoopMode, SkinnedRenderer};
pub use id::{BlendTreeId, ForeignId, IdKind, LibraryTag};
pub use library::{AnimationLibrary, ClipId, MaskId, SkeletonId};
pub use machine::{MachineId, StateMachine};
pub use math::{Affine, Transform};
pub use mesh::{SkinVertex, SkinnedMesh};
pub use morph::{MorphDelta, MorphSet, MorphTarget, MorphTargets};
pub use offline::LibraryBuilder;
pub use skeleton::{JointDesc, MAX_SOCKETS, Skeleton, Socket};

/// The README's Rust examples, compiled as doctests so they stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
