//! The character a crowd is made of: its library, mesh, clips and size, its layer assets, prop
//! and footprints; the built-in mannequin's, and where a member stands in the world.

use crate::library::{AnimationLibrary, ClipId, SkeletonId};
use crate::mannequin;
use crate::mesh::SkinnedMesh;
use glam::{Mat4, Quat, Vec2, Vec3};

/// The horizontal size, metres (mean of the two sides of its box), of a character that
/// [`CrowdDesc::spacing`](super::CrowdDesc::spacing) is meant for: about the mannequin's. Larger
/// characters are spaced proportionally wider.
pub const REFERENCE_FOOTPRINT: f32 = 0.8;

/// The height, metres, of a character the overview cameras are framed for (the mannequin's).
pub const REFERENCE_HEIGHT: f32 = 1.8;

/// What a crowd is made of: a skeleton with its clips in a library, the mesh drawn for it, which
/// clips the crowd plays and how fast they travel, and how big the character is.
#[derive(Clone, Debug)]
pub struct Character {
    /// A name for messages: `mannequin`, or the file's name.
    pub name: String,
    /// The library holding [`Character::skeleton`] and [`Character::clips`].
    pub library: AnimationLibrary,
    /// The skeleton every instance animates.
    pub skeleton: SkeletonId,
    /// The mesh drawn for every instance, validated against the skeleton. For an imported file,
    /// every primitive bound to the skeleton merged into one mesh (rigid parts included).
    pub mesh: SkinnedMesh,
    /// The clips the crowd plays.
    pub clips: Vec<ClipId>,
    /// The name of each clip, in the same order.
    pub clip_names: Vec<String>,
    /// Cumulative share of the crowd per clip: a member plays the first clip whose entry exceeds
    /// a uniform random number in `[0, 1)`; the last entry is 1.
    pub clip_shares: Vec<f32>,
    /// Per clip, the root velocity at which the feet do not slide, character space `(x, z)`,
    /// metres per second in the world (after [`Character::scale`]); zero animates in place.
    pub velocities: Vec<Vec2>,
    /// Uniform scale from model units to world metres (1 for the mannequin; a power of ten for an
    /// imported file, so that a model authored in centimetres stands a metre or so tall).
    pub scale: f32,
    /// The model-space point put on the ground at a crowd member's position: the centre of the
    /// character's feet (the bottom of its box).
    pub origin: Vec3,
    /// The character's horizontal size (mean of the two sides of its box, metres) over
    /// [`REFERENCE_FOOTPRINT`]: spacing scales by it. 1 for the mannequin.
    pub relative_footprint: f32,
    /// The character's height over [`REFERENCE_HEIGHT`]: camera heights scale by it. 1 for the
    /// mannequin.
    pub relative_height: f32,
    /// A locomotion blend tree driven by the character-space velocity (parameters x, z in m/s).
    /// With one, crowd members wander: they walk, run, strafe, back up, turn and stop, blending
    /// their gaits by velocity and going to idle and back by inertialized transitions. Without,
    /// each member plays one clip (in place, or moving at that clip's velocity).
    pub locomotion: Option<crate::blend::BlendTreeId>,
    /// Layer assets for waving, flinching and aiming, when the character has them.
    pub layers: Option<LayerAssets>,
    /// A prop some members hold in a socket, when the character has one.
    pub prop: Option<HeldProp>,
    /// Footprints where the members' feet land, when the character has foot-down events and
    /// sole sockets.
    pub footprints: Option<FootprintSpec>,
    /// Whether its clips carry root motion: moving members are then moved by it on the GPU
    /// ([`crate::gpu::Controller::set_root_motion`]), steered by a turn rate, instead of by the CPU
    /// at their course's velocity.
    pub root_motion: bool,
    /// The character's IK chains, when it has them: the crowd then stands on [`super::RELIEF`],
    /// its feet planted with ground goals, and looks at the circling target.
    pub ik: Option<CharacterIk>,
    /// A state machine of [`Character::library`] that wandering members follow
    /// ([`Character::mannequin_with_machine`]): the GPU then decides what each plays from the
    /// float parameters [`MACHINE_SPEED`](super::MACHINE_SPEED) and
    /// [`MACHINE_DIRECTION`](super::MACHINE_DIRECTION) the crowd sets from where it steers the
    /// member, instead of the crowd blending its locomotion tree and cross-fading to idle and
    /// back itself.
    pub machine: Option<crate::machine::MachineId>,
}

/// A character's IK chains ([`crate::Skeleton::add_ik_chain`]): its legs, planted on the ground,
/// and the chain that looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CharacterIk {
    /// The left and right legs' two-bone chains.
    pub legs: [usize; 2],
    /// The aim chain of the head.
    pub look: usize,
}

/// Where a character's feet land: its left and right foot-down events and the sockets at its
/// soles. A crowd stamps a footprint at the sole's socket whenever its event fires
/// ([`crate::gpu::Footprints`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FootprintSpec {
    /// The left and right foot-down events (numbers of the library's event names).
    pub events: [u32; 2],
    /// The left and right sole sockets of the skeleton.
    pub sockets: [usize; 2],
}

/// A prop some members of a crowd hold: a rigid mesh at one of the skeleton's sockets, drawn by a
/// [`PropRenderer`](crate::gpu::PropRenderer) from the socket matrices the animator writes.
#[derive(Clone, Debug)]
pub struct HeldProp {
    /// The mesh, in the socket's frame.
    pub mesh: SkinnedMesh,
    /// Which of the skeleton's sockets holds it.
    pub socket: usize,
    /// Linear RGB.
    pub color: [f32; 3],
    /// Every `every`-th member holds one (members 1, 1 + every, ...).
    pub every: usize,
}

/// The layer assets of a character that has them (the built-in mannequin).
#[derive(Clone, Copy, Debug)]
pub struct LayerAssets {
    pub(super) wave: ClipId,
    pub(super) flinch: ClipId,
    pub(super) aim_pose: ClipId,
    pub(super) aim_offset: crate::blend::BlendTreeId,
    pub(super) right_arm: crate::library::MaskId,
}

impl Character {
    /// The built-in mannequin with its six clips, compressed; a crowd of it is the default scene.
    #[must_use]
    pub fn mannequin() -> Self {
        Self::mannequin_in(crate::offline::compress::ClipFormat::Compressed)
    }

    /// As [`Character::mannequin`], its clips in `format`.
    #[must_use]
    pub fn mannequin_in(format: crate::offline::compress::ClipFormat) -> Self {
        Self::mannequin_with(format, |_, _| Ok(None)).expect("the built-in mannequin builds")
    }

    /// The mannequin of [`Character::mannequin_in`], its library holding assets of its own too:
    /// `extra` adds them to the library's builder (the crowd's skeleton given) and returns the
    /// state machine members follow, if any ([`Character::machine`]).
    pub(super) fn mannequin_with(
        format: crate::offline::compress::ClipFormat,
        extra: impl FnOnce(&mut crate::LibraryBuilder, SkeletonId) -> crate::Result<Option<crate::machine::MachineId>>,
    ) -> crate::Result<Self> {
        let m = mannequin::mannequin();
        // The mannequin with a grip in the right hand, where some members hold a sword, and
        // sockets at its soles, where footprints are stamped when its feet land.
        let mut with_sockets = mannequin::skeleton_with_grip();
        let soles = mannequin::add_soles(&mut with_sockets).ok();
        // Legs that stand on the ground and a head that looks.
        let ik = mannequin::add_ik(&mut with_sockets)
            .ok()
            .map(|[l, r, look]| CharacterIk { legs: [l, r], look });
        // The gaits with root motion: members step as fast as they move; and they breathe.
        let (mut builder, skeleton, clips) = mannequin::crowd_library_builder_in(with_sockets, format);
        let machine = extra(&mut builder, skeleton)?;
        let library = builder.build();
        let footprints = match (
            soles,
            library.event_id(mannequin::FOOT_DOWN_L),
            library.event_id(mannequin::FOOT_DOWN_R),
        ) {
            (Some(sockets), Some(l), Some(r)) => Some(FootprintSpec {
                events: [l, r],
                sockets,
            }),
            _ => None,
        };
        let velocities = mannequin::CLIP_NAMES
            .iter()
            .map(|name| {
                m.gaits
                    .iter()
                    .find(|g| g.clip == *name)
                    .map_or(Vec2::ZERO, |g| g.velocity)
            })
            .collect();
        let locomotion = library.blend().tree_id(mannequin::LOCOMOTION);
        let named = |n: &str| library.clip_id(skeleton, n).ok();
        let layers = (|| {
            Some(LayerAssets {
                wave: named(mannequin::layer_assets::WAVE)?,
                flinch: named(mannequin::layer_assets::FLINCH)?,
                aim_pose: named(mannequin::layer_assets::AIM_POSE)?,
                aim_offset: library.blend().tree_id(mannequin::layer_assets::AIM_OFFSET)?,
                right_arm: library.mask_id(mannequin::layer_assets::RIGHT_ARM)?,
            })
        })();
        Ok(Self {
            name: "mannequin".into(),
            library,
            skeleton,
            mesh: m.mesh,
            clips,
            clip_names: mannequin::CLIP_NAMES.iter().map(|s| (*s).to_string()).collect(),
            // idle 25 %, walk 35 %, run 20 %, backward 6 %, strafes 7 % each.
            clip_shares: vec![0.25, 0.60, 0.80, 0.86, 0.93, 1.0],
            velocities,
            scale: 1.0,
            origin: Vec3::ZERO,
            relative_footprint: 1.0,
            relative_height: 1.0,
            locomotion,
            layers,
            prop: Some(HeldProp {
                mesh: mannequin::sword(),
                socket: 0,
                color: [0.72, 0.74, 0.8],
                every: 4,
            }),
            footprints,
            root_motion: true,
            ik,
            machine,
        })
    }

    /// Bounding box, model units, of the mesh skinned by `clip` at `time` seconds (clamped to the
    /// clip), evaluated on the CPU mirror. The bind-pose box when `time` is not finite or the
    /// mesh cannot be skinned by the pose.
    ///
    /// # Errors
    ///
    /// [`crate::Error::ForeignId`] when `clip` is of another library than the character's.
    pub fn posed_bounds(&self, clip: ClipId, time: f32) -> crate::Result<(Vec3, Vec3)> {
        self.library.clip_header(clip)?;
        if !time.is_finite() {
            return Ok(self.mesh.bounds());
        }
        let skinned = crate::cpu::pose_at(&self.library, clip, time)
            .and_then(|pose| crate::cpu::skin(&pose.palette, 0, &self.mesh.gpu_vertices()));
        let Ok(points) = skinned else {
            return Ok(self.mesh.bounds());
        };
        Ok(points
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
                let p = p.position.truncate();
                (lo.min(p), hi.max(p))
            }))
    }

    /// `world_from_model` of a member standing at `position` on the ground (x, z), turned by
    /// `heading` radians about +Y: [`Character::origin`] on the spot, scaled by
    /// [`Character::scale`].
    #[must_use]
    pub fn world(&self, position: Vec2, heading: f32) -> Mat4 {
        let m = Mat4::from_rotation_translation(Quat::from_rotation_y(heading), Vec3::new(position.x, 0.0, position.y));
        if self.scale == 1.0 && self.origin == Vec3::ZERO {
            m
        } else {
            m * Mat4::from_scale(Vec3::splat(self.scale)) * Mat4::from_translation(-self.origin)
        }
    }
}
