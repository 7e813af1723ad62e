//! A ready-made scene: a crowd of one [`Character`] on a ground plane, each member playing its own
//! clip at its own phase and rate. The default character is the built-in mannequin, whose walkers
//! and runners move across the field at the speed their gait was authored for; a character
//! imported from glTF ([`Character::from_gltf`]) animates in place, since nothing in a file says
//! how fast its clips travel. Members of a character with a state machine
//! ([`Character::mannequin_with_machine`], the crowd demo's) play what their machine decides on
//! the GPU from the speed and direction they are steered at; [`Crowd::trigger`] sets a trigger
//! on a random share of them and [`Crowd::machine_counts`] says how many each state holds. The
//! headless example, the crowd demo, the render test and the
//! benchmarks share it; it is also a compact example of driving [`Animator`] and
//! [`SkinnedRenderer`].

mod character;
mod crowd;
mod frame;
#[cfg(feature = "gltf")]
mod gltf;
mod machine;
mod members;
mod rng;
mod wander;
mod wiring;

pub use character::{
    Character, CharacterIk, FootprintSpec, HeldProp, LayerAssets, REFERENCE_FOOTPRINT, REFERENCE_HEIGHT,
};
pub use machine::{MachineCounts, WAVE_ONCE};
pub(crate) use rng::SplitMix;
pub use wander::{MACHINE_DIRECTION, MACHINE_SPEED};

use crate::gpu::{Animator, FootprintRenderer, Footprints, GroundRenderer, PropRenderer, SkinnedRenderer};
use glam::Vec3;
use wander::Agent;

/// How many characters and how they are laid out.
#[derive(Clone, Copy, Debug)]
pub struct CrowdDesc {
    /// Number of characters.
    pub count: u32,
    /// Seed of the random layout, clips, phases and tints.
    pub seed: u64,
    /// Distance between neighbours on the starting grid, metres.
    pub spacing: f32,
    /// Whether walkers and runners move (otherwise they animate in place).
    pub moving: bool,
    /// Whether footprints are stamped where feet land (when the character has foot-down events
    /// and sole sockets). They are a few seconds of history kept on the GPU: a crowd rebuilt on
    /// a new device ([`Crowd::rebuild`]) starts with none.
    pub footprints: bool,
    /// How every member is skinned ([`crate::gpu::Skinning`]); anything but linear makes the
    /// animator keep dual quaternions. Change a member's later with
    /// `crowd.animator.set_skinning`.
    pub skinning: crate::gpu::Skinning,
    /// Cull against the camera ([`crate::gpu::AnimatorDesc::culling`]): members out of view only
    /// advance their clocks, and are not drawn; footprints are stamped only by members in view.
    /// On by default.
    pub culling: bool,
    /// With culling: far members that play one clip alone are drawn with a vertex animation
    /// texture of the character's clips, baked when the crowd is made
    /// ([`crate::offline::vat::bake_vat`], about a second for the mannequin), below a projected
    /// size of [`crate::gpu::DEFAULT_VAT_SIZE`]. On by default.
    pub vat: bool,
}

impl Default for CrowdDesc {
    fn default() -> Self {
        Self {
            count: 1000,
            seed: 1,
            spacing: 1.6,
            moving: true,
            footprints: true,
            skinning: crate::gpu::Skinning::Linear,
            culling: true,
            vat: true,
        }
    }
}

/// The crowd's ground when its character has legs to plant ([`Character::ik`]): hills up to
/// about 1.1 m (slopes up to about 14°) within 150 m of the centre, flat beyond. Made of
/// smoothsteps, not of `sin`: WGSL lets a device's `sin` be off by 2⁻¹¹, which would put the
/// same character's feet at heights a millimetre apart on two devices. WGSL for
/// `AnimatorDesc::ground` and the ground renderer; [`relief_height`] is the same in Rust.
pub const RELIEF: &str = "// A smooth periodic wave in [-1, 1] of period 1 (a cosine made of smoothsteps).
fn relief_wave(u: f32) -> f32 {
    return 2.0 * smoothstep(0.0, 1.0, abs(2.0 * fract(u) - 1.0)) - 1.0;
}

fn ground_height(p: vec2<f32>) -> f32 {
    let hills = 0.8 * relief_wave(p.x / 25.0 + 0.06) * relief_wave(p.y / 31.0) + 0.3 * relief_wave(0.014 * p.x - 0.021 * p.y);
    return hills * (1.0 - smoothstep(120.0, 150.0, length(p)));
}
";

/// The most [`RELIEF`] rises or falls from 0: its two waves' amplitudes, 0.8 + 0.3 m.
pub const RELIEF_MAX: f32 = 1.1;

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn relief_wave(u: f32) -> f32 {
    2.0 * smoothstep(0.0, 1.0, (2.0 * (u - u.floor()) - 1.0).abs()) - 1.0
}

/// [`RELIEF`]'s height at world `(x, z)`, on the CPU.
#[must_use]
pub fn relief_height(p: glam::Vec2) -> f32 {
    let hills =
        0.8 * relief_wave(p.x / 25.0 + 0.06) * relief_wave(p.y / 31.0) + 0.3 * relief_wave(0.014 * p.x - 0.021 * p.y);
    hills * (1.0 - smoothstep(120.0, 150.0, p.length()))
}

/// Frames between a frame and the crowd's use of where root motion took its members then.
const ROOT_LAG: u64 = 3;

/// What a culling crowd's last frame did with its members ([`Crowd::cull_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CullCounts {
    /// Members drawn skinned (in view, not by VAT).
    pub drawn: usize,
    /// Members evaluated: sampled, propagated and skinned into palettes.
    pub evaluated: usize,
    /// Members drawn with their vertex animation texture.
    pub vat: usize,
}

/// A crowd of one character with its animator and renderers.
pub struct Crowd {
    /// The animator holding every character's state (one instance per character).
    pub animator: Animator,
    /// The character every member of the crowd is an instance of.
    pub character: Character,
    renderer: SkinnedRenderer,
    ground: GroundRenderer,
    /// The character's prop in the hands of some members.
    props: Option<PropRenderer>,
    /// Footprints where the members' feet land, and their renderer.
    footprints: Option<(Footprints, FootprintRenderer)>,
    /// Animation seconds played (the footprints' clock).
    seconds: f32,
    /// The last second's frames: `dt` and the events read back in it.
    event_window: std::collections::VecDeque<(f32, usize)>,
    /// Frames read back and not yet used (roots, [`ROOT_LAG`] frames late).
    held: Vec<crate::gpu::FrameReadback>,
    agents: Vec<Agent>,
    half_extent: f32,
    moving: bool,
    animation_paused: bool,
    /// Whether members have courses (built with `CrowdDesc::moving`).
    roams: bool,
    rng: SplitMix,
    clock: f32,
    target: Vec3,
    /// The view the next update culls against (the last camera set).
    cull_view: std::cell::Cell<Option<glam::Mat4>>,
    /// The character's VAT ([`CrowdDesc::vat`]), kept for a rebuild.
    vat: Option<std::sync::Arc<crate::vat::Vat>>,
    /// Whether members are tinted by their update rate ([`Crowd::set_lod_tint`]).
    lod_tint: bool,
    /// How many members each state of the character's machine held in the last frame read back.
    machine_counts: Option<MachineCounts>,
}
