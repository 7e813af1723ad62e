//! A ready-made scene: a crowd of one [`Character`] on a ground plane, each member playing its own
//! clip at its own phase and rate. The default character is the built-in mannequin, whose walkers
//! and runners move across the field at the speed their gait was authored for; a character
//! imported from glTF ([`Character::from_gltf`]) animates in place, since nothing in a file says
//! how fast its clips travel. The headless example, the crowd demo, the render test and the
//! benchmarks share it; it is also a compact example of driving [`Animator`] and
//! [`SkinnedRenderer`].

use crate::error::{Error, Result};
use crate::gpu::{
    Animator, AnimatorDesc, Camera, Curve, FootprintRenderer, Footprints, GroundRenderer, InstanceDesc, Layer,
    LayerMode, PropRenderer, SkinnedRenderer, Transition,
};
use crate::library::{AnimationLibrary, ClipId, SkeletonId};
use crate::mannequin;
use crate::mesh::SkinnedMesh;
use crate::offline::gltf_import::{self, Imported};
use glam::{Mat4, Quat, Vec2, Vec3};
use std::path::Path;

/// The horizontal size, metres (mean of the two sides of its box), of a character that
/// [`CrowdDesc::spacing`] is meant for: about the mannequin's. Larger characters are spaced
/// proportionally wider.
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
    /// their gaits by velocity and cross-fading to idle and back. Without, each member plays one
    /// clip (in place, or moving at that clip's velocity).
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
/// [`PropRenderer`] from the socket matrices the animator writes.
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

impl Character {
    /// The built-in mannequin with its six clips, compressed; a crowd of it is the default scene.
    #[must_use]
    pub fn mannequin() -> Self {
        Self::mannequin_in(crate::offline::compress::ClipFormat::Compressed)
    }

    /// As [`Character::mannequin`], its clips in `format`.
    #[must_use]
    pub fn mannequin_in(format: crate::offline::compress::ClipFormat) -> Self {
        let m = mannequin::mannequin();
        // The mannequin with a grip in the right hand, where some members hold a sword, and
        // sockets at its soles, where footprints are stamped when its feet land.
        let mut with_sockets = mannequin::skeleton_with_grip();
        let soles = mannequin::add_soles(&mut with_sockets).ok();
        // The gaits with root motion: members step as fast as they move.
        let (library, skeleton, clips) = mannequin::library_with_root_motion_in(with_sockets, format);
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
        let named = |n: &str| library.clip_id(skeleton, n);
        let layers = (|| {
            Some(LayerAssets {
                wave: named(mannequin::layer_assets::WAVE)?,
                flinch: named(mannequin::layer_assets::FLINCH)?,
                aim_pose: named(mannequin::layer_assets::AIM_POSE)?,
                aim_offset: library.blend().tree_id(mannequin::layer_assets::AIM_OFFSET)?,
                right_arm: library.mask_id(mannequin::layer_assets::RIGHT_ARM)?,
            })
        })();
        Self {
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
        }
    }

    /// The character of a glTF file: its first skinned skeleton that has a mesh (or the rigid
    /// node hierarchy of an unskinned file), every mesh bound to it and all of its clips, played
    /// by equal shares of a crowd, in place.
    pub fn from_gltf(path: &Path) -> Result<Self> {
        Self::from_gltf_in(path, crate::offline::compress::ClipFormat::Raw)
    }

    /// As [`Character::from_gltf`], its clips in `format` (compressed with the default settings,
    /// glTF's metres for units).
    pub fn from_gltf_in(path: &Path, format: crate::offline::compress::ClipFormat) -> Result<Self> {
        let imported = gltf_import::load(path)?;
        let skeleton = Self::skeleton_of(&imported)?;
        let source = match format.settings() {
            Some(settings) => crate::offline::gltf_import::ClipSource::Compress(settings),
            None => crate::offline::gltf_import::ClipSource::Raw,
        };
        Self::from_imported_with(&imported, skeleton, &source)
    }

    /// The skeleton [`Character::from_gltf`] picks: the primary one (first skin, or the scene of an
    /// unskinned file) when a mesh is bound to it, else the first skeleton that has a mesh.
    pub fn skeleton_of(imported: &Imported) -> Result<usize> {
        let has_mesh = |s: usize| imported.meshes.iter().any(|m| m.skeleton == s);
        imported
            .primary_skeleton()
            .filter(|&s| has_mesh(s))
            .or_else(|| (0..imported.skeletons.len()).find(|&s| has_mesh(s)))
            .ok_or_else(|| Error::Asset {
                file: imported.file.clone(),
                what: "has no mesh to draw".into(),
            })
    }

    /// The character made of skeleton `skeleton` of an imported file: its clips in file order,
    /// every mesh bound to it merged into one, scaled and placed from the bounds of its pose at
    /// the start of its first clip.
    pub fn from_imported(imported: &Imported, skeleton: usize) -> Result<Self> {
        Self::from_imported_with(imported, skeleton, &crate::offline::gltf_import::ClipSource::Raw)
    }

    /// As [`Character::from_imported`], the clips from `source` (raw, compressed, or a
    /// compressed library file).
    pub fn from_imported_with(
        imported: &Imported,
        skeleton: usize,
        source: &crate::offline::gltf_import::ClipSource,
    ) -> Result<Self> {
        let err = |what: String| Error::Asset {
            file: imported.file.clone(),
            what,
        };
        let s = imported
            .skeletons
            .get(skeleton)
            .ok_or_else(|| err(format!("has no skeleton {skeleton}")))?;
        if s.clips.is_empty() {
            return Err(err(format!(
                "skeleton '{}' has no animation to play",
                s.skeleton.name()
            )));
        }
        let lib = imported.build_library_with(source)?;
        let mut mesh = SkinnedMesh {
            name: Path::new(&imported.file)
                .file_name()
                .map_or_else(|| imported.file.clone(), |f| f.to_string_lossy().into_owned()),
            ..Default::default()
        };
        for m in imported.meshes.iter().filter(|m| m.skeleton == skeleton) {
            let base = u32::try_from(mesh.positions.len()).map_err(|_| err("too many vertices".into()))?;
            let n = m.mesh.positions.len();
            mesh.positions.extend_from_slice(&m.mesh.positions);
            mesh.normals
                .extend((0..n).map(|v| m.mesh.normals.get(v).copied().unwrap_or(Vec3::Y)));
            mesh.uvs
                .extend((0..n).map(|v| m.mesh.uvs.get(v).copied().unwrap_or(Vec2::ZERO)));
            mesh.joints.extend_from_slice(&m.mesh.joints);
            mesh.weights.extend_from_slice(&m.mesh.weights);
            mesh.indices.extend(m.mesh.indices.iter().map(|i| i + base));
        }
        if mesh.positions.is_empty() {
            return Err(err(format!("no mesh is bound to skeleton '{}'", s.skeleton.name())));
        }
        mesh.validate(s.skeleton.joint_count())
            .map_err(|e| err(e.to_string()))?;
        let n = s.clips.len();
        let mut c = Self {
            name: mesh.name.clone(),
            library: lib.library,
            skeleton: lib.skeletons[skeleton],
            mesh,
            clips: lib.clips[skeleton].clone(),
            clip_names: s.clips.iter().map(|c| c.clip.name.clone()).collect(),
            clip_shares: (1..=n)
                .map(|k| if k == n { 1.0 } else { k as f32 / n as f32 })
                .collect(),
            velocities: vec![Vec2::ZERO; n],
            scale: 1.0,
            origin: Vec3::ZERO,
            relative_footprint: 1.0,
            relative_height: 1.0,
            locomotion: None,
            layers: None,
            prop: None,
            footprints: None,
            root_motion: false,
        };
        let (lo, hi) = c.posed_bounds(c.clips[0], 0.0);
        let size = hi - lo;
        let largest = size.max_element();
        if largest.is_finite() && largest > 0.0 {
            c.scale = 10f32.powf(-(largest / 2.0).log10().round());
        }
        c.origin = Vec3::new((lo.x + hi.x) * 0.5, lo.y, (lo.z + hi.z) * 0.5);
        // The mean of the two horizontal sides: a long, narrow animal needs less room than its
        // length, a wide one less than its width.
        c.relative_footprint = ((size.x + size.z) * 0.5 * c.scale / REFERENCE_FOOTPRINT).clamp(0.25, 100.0);
        c.relative_height = (size.y * c.scale / REFERENCE_HEIGHT).clamp(0.1, 100.0);
        if !c.origin.is_finite() {
            c.origin = Vec3::ZERO;
        }
        Ok(c)
    }

    /// Bounding box, model units, of the mesh skinned by `clip` at `time` seconds (clamped to the
    /// clip), evaluated on the CPU mirror. The bind-pose box when `clip` is not in the library.
    #[must_use]
    pub fn posed_bounds(&self, clip: ClipId, time: f32) -> (Vec3, Vec3) {
        if !time.is_finite() {
            return self.mesh.bounds();
        }
        let skinned = crate::cpu::pose_at(&self.library, clip, time)
            .and_then(|pose| crate::cpu::skin(&pose.palette, 0, &self.mesh.gpu_vertices()));
        let Ok(points) = skinned else {
            return self.mesh.bounds();
        };
        points
            .iter()
            .fold((Vec3::splat(f32::MAX), Vec3::splat(f32::MIN)), |(lo, hi), p| {
                let p = p.position.truncate();
                (lo.min(p), hi.max(p))
            })
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
}

impl Default for CrowdDesc {
    fn default() -> Self {
        Self {
            count: 1000,
            seed: 1,
            spacing: 1.6,
            moving: true,
            footprints: true,
        }
    }
}

#[derive(Clone, Copy)]
struct Agent {
    position: Vec2,
    heading: f32,
    /// World-space velocity, m/s.
    velocity: Vec2,
    /// Wandering (with a locomotion tree): the character-space velocity driving the blend, the
    /// velocity it is easing towards, the turn rate (rad/s), the time to the next decision and
    /// whether the member is stopped (playing idle as a state of its own).
    wander: Option<Wander>,
    /// With root motion: the frame of the member's last teleport across the field's edge (its
    /// read-back positions before it are stale).
    teleported_at: u64,
}

#[derive(Clone, Copy)]
struct Wander {
    velocity: Vec2,
    target: Vec2,
    turn: f32,
    timer: f32,
    stopped: bool,
    /// What the member does with its layers.
    role: Role,
    /// Seconds until the next flinch (or until the current one ends).
    flinch: f32,
    flinching: bool,
}

/// Layer roles in a crowd of the built-in character.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Locomotion only.
    Plain,
    /// Waves with the right arm (masked override layer).
    Waving,
    /// Aims at the moving target: the arm held forward (masked override) and an aim offset
    /// (mesh-space additive blend space) driven by the target's direction.
    Aiming,
}

/// The layer assets of a character that has them (the built-in mannequin).
#[derive(Clone, Copy, Debug)]
pub struct LayerAssets {
    wave: ClipId,
    flinch: ClipId,
    aim_pose: ClipId,
    aim_offset: crate::blend::BlendTreeId,
    right_arm: crate::library::MaskId,
}

/// Layer slots used by the crowd.
const ARM_SLOT: usize = 0;
const FLINCH_SLOT: usize = 1;
const AIM_SLOT: usize = 2;

/// Frames between a frame and the crowd's use of where root motion took its members then.
const ROOT_LAG: u64 = 3;

/// How fast a wandering member's velocity eases towards its target (1/s).
const EASE: f32 = 2.5;
/// Length of the cross-fades when a wandering member stops or starts, seconds.
const STOP_START_FADE: f32 = 0.5;

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
}

/// A small deterministic generator (SplitMix64), so the scene and the bench need no RNG
/// dependency.
#[derive(Clone)]
pub(crate) struct SplitMix(pub(crate) u64);
impl SplitMix {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
}

/// Marks in a crowd's footprint ring: about six seconds of a crowd's steps (two a second per
/// member), within 4,096 and 65,536.
fn footprint_capacity(count: usize) -> u32 {
    (count * 12).clamp(4096, 65_536) as u32
}

/// Footprints of `character`'s members and their renderer, when it has foot-down events and
/// sole sockets; the animator then watches events (a log of a record per two members, at least
/// 4,096).
fn footprints(
    device: &wgpu::Device,
    animator: &mut Animator,
    character: &Character,
    count: usize,
    color_format: wgpu::TextureFormat,
    depth_format: Option<wgpu::TextureFormat>,
    sample_count: u32,
) -> Result<Option<(Footprints, FootprintRenderer)>> {
    let Some(spec) = &character.footprints else {
        return Ok(None);
    };
    if animator.event_capacity() == 0 {
        animator.watch_events(device, (count as u32 / 2).max(4096))?;
    }
    let marks = Footprints::new(device, animator, spec.events, spec.sockets, footprint_capacity(count))?;
    let renderer = marks.renderer(device, color_format, depth_format, sample_count)?;
    Ok(Some((marks, renderer)))
}

/// The prop renderer of `character`'s prop held by members 1, 1 + every, ... below `count`.
fn prop_renderer(
    device: &wgpu::Device,
    animator: &Animator,
    character: &Character,
    count: usize,
    color_format: wgpu::TextureFormat,
    depth_format: Option<wgpu::TextureFormat>,
    sample_count: u32,
) -> Result<Option<PropRenderer>> {
    let Some(prop) = &character.prop else {
        return Ok(None);
    };
    let holders: Vec<usize> = (1..count).step_by(prop.every.max(1)).collect();
    PropRenderer::new(
        device,
        animator,
        &prop.mesh,
        prop.socket,
        &holders,
        prop.color,
        color_format,
        depth_format,
        sample_count,
    )
    .map(Some)
}

fn tint(r: &mut SplitMix) -> [u8; 4] {
    // Muted clothing colours: pick a hue, keep saturation and value moderate.
    let h = r.unit() * 6.0;
    let (s, v) = (r.range(0.25, 0.6), r.range(0.55, 0.9));
    let c = v * s;
    let x = c * (1.0 - ((h % 2.0) - 1.0).abs());
    let (r1, g1, b1) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = v - c;
    let to = |f: f32| ((f + m) * 255.0).round() as u8;
    [to(r1), to(g1), to(b1), 255]
}

impl Crowd {
    /// A crowd of built-in mannequins on `device`, drawing into `color_format` with optional
    /// depth and MSAA.
    pub fn new(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
        desc: &CrowdDesc,
    ) -> Result<Self> {
        Self::with_character(
            device,
            color_format,
            depth_format,
            sample_count,
            desc,
            Character::mannequin(),
        )
    }

    /// A crowd of `character` on `device`, drawing into `color_format` with optional depth and
    /// MSAA. The spacing is [`CrowdDesc::spacing`] × [`Character::relative_footprint`].
    pub fn with_character(
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
        desc: &CrowdDesc,
        character: Character,
    ) -> Result<Self> {
        let c = &character;
        if c.clips.is_empty() || c.clip_shares.len() != c.clips.len() || c.velocities.len() != c.clips.len() {
            return Err(Error::Limit {
                what: format!(
                    "character '{}' needs at least one clip, and one share and one velocity per clip",
                    c.name
                ),
            });
        }
        let joints = c
            .library
            .skeletons()
            .get(c.skeleton.0 as usize)
            .map_or(0, |s| s.joint_count());
        let mut animator = Animator::new(
            device,
            &c.library,
            &AnimatorDesc {
                max_instances: desc.count.max(1),
                max_joints: None,
                page_instances: None,
            },
        )?;
        let renderer = SkinnedRenderer::new(
            device,
            &animator,
            &c.mesh,
            joints,
            color_format,
            depth_format,
            sample_count,
        )?;
        let ground = GroundRenderer::new(device, color_format, depth_format, sample_count);
        let spacing = desc.spacing * c.relative_footprint;
        let side = (desc.count as f32).sqrt().ceil().max(1.0);
        let half_extent = side * spacing * 0.5;
        let mut r = SplitMix(desc.seed);
        let mut agents = Vec::with_capacity(desc.count as usize);
        for i in 0..desc.count {
            let (gx, gz) = ((i as f32 % side), (i as f32 / side).floor());
            let jitter = Vec2::new(r.range(-0.25, 0.25), r.range(-0.25, 0.25)) * spacing;
            let position = Vec2::new(gx + 0.5 - side * 0.5, gz + 0.5 - side * 0.5) * spacing + jitter;
            let pick = r.unit();
            let k = c.clip_shares.iter().position(|&s| pick < s).unwrap_or(0);
            let clip = c.clips[k];
            let rate = r.range(0.85, 1.15);
            let heading = r.range(-std::f32::consts::PI, std::f32::consts::PI);
            let local_velocity = c.velocities[k] * rate;
            let velocity = {
                let v = Quat::from_rotation_y(heading) * Vec3::new(local_velocity.x, 0.0, local_velocity.y);
                Vec2::new(v.x, v.z)
            };
            let duration = c.library.clip_duration(clip).unwrap_or(1.0);
            if let (Some(tree), true) = (c.locomotion, desc.moving) {
                // A wandering member: starts on a random course at a random phase.
                let target = random_course(&mut r);
                // A share of the crowd waves (15 %) or aims at the moving target (15 %); everyone
                // may flinch now and then.
                let pick = r.unit();
                let role = match (c.layers, pick) {
                    (Some(_), p) if p < 0.15 => Role::Waving,
                    (Some(_), p) if p < 0.30 => Role::Aiming,
                    _ => Role::Plain,
                };
                let agent = Agent {
                    position,
                    heading,
                    velocity: Vec2::ZERO,
                    wander: Some(Wander {
                        velocity: target,
                        target,
                        turn: r.range(-0.4, 0.4),
                        timer: r.range(0.5, 6.0),
                        stopped: false,
                        role,
                        flinch: r.range(1.0, 20.0),
                        flinching: false,
                    }),
                    teleported_at: 0,
                };
                let index = animator.add_instance(&InstanceDesc {
                    time: r.unit(),
                    world: c.world(agent.position, agent.heading),
                    tint: tint(&mut r),
                    ..InstanceDesc::tree(tree, [target.x, target.y, 0.0, 0.0])
                })?;
                if c.root_motion {
                    animator.set_root_motion(index, true)?;
                    if let Some(w) = &agent.wander {
                        animator.set_root_turn(index, w.turn)?;
                    }
                }
                if let Some(l) = &c.layers {
                    let arm = match role {
                        Role::Waving => Some((l.wave, r.unit())),
                        Role::Aiming => Some((l.aim_pose, 0.0)),
                        Role::Plain => None,
                    };
                    if let Some((clip, start)) = arm {
                        let layer = Layer {
                            mask: Some(l.right_arm),
                            start,
                            ..Layer::clip(LayerMode::Override, clip)
                        };
                        animator.set_layer(index, ARM_SLOT, Some(&layer), false)?;
                    }
                    if role == Role::Aiming {
                        animator.set_layer(
                            index,
                            AIM_SLOT,
                            Some(&Layer::tree(LayerMode::AdditiveMesh, l.aim_offset)),
                            false,
                        )?;
                    }
                }
                agents.push(agent);
                continue;
            }
            let agent = Agent {
                position,
                heading,
                velocity: if desc.moving { velocity } else { Vec2::ZERO },
                wander: None,
                teleported_at: 0,
            };
            let index = animator.add_instance(&InstanceDesc {
                time: r.unit() * duration,
                rate,
                world: c.world(agent.position, agent.heading),
                tint: tint(&mut r),
                ..InstanceDesc::new(clip)
            })?;
            if c.root_motion && desc.moving {
                animator.set_root_motion(index, true)?;
            }
            agents.push(agent);
        }
        if c.root_motion && desc.moving {
            // Where root motion took each member, read back to keep them on the field and to aim.
            let all: Vec<usize> = (0..agents.len()).collect();
            animator.watch_outputs(device, &all)?;
        }
        let props = prop_renderer(
            device,
            &animator,
            &character,
            agents.len(),
            color_format,
            depth_format,
            sample_count,
        )?;
        let footprints = if desc.footprints {
            footprints(
                device,
                &mut animator,
                &character,
                agents.len(),
                color_format,
                depth_format,
                sample_count,
            )?
        } else {
            None
        };
        Ok(Self {
            animator,
            character,
            renderer,
            ground,
            props,
            footprints,
            seconds: 0.0,
            event_window: std::collections::VecDeque::new(),
            held: Vec::new(),
            agents,
            half_extent,
            moving: desc.moving,
            roams: desc.moving,
            animation_paused: false,
            rng: SplitMix(desc.seed ^ 0x5eed_5eed),
            clock: 0.0,
            target: Vec3::Y * 1.6,
        })
    }

    /// The same crowd on another device (after its device was lost, say), drawing into
    /// `color_format` with optional depth and MSAA: the animator rebuilt from what it kept
    /// ([`Animator::rebuild`]; the crowd's animator needs [`Animator::set_recovery`]), the
    /// renderers made again, every member where it was, doing what it did.
    ///
    /// Errors: as [`Animator::rebuild`]; renderers the device refuses.
    pub fn rebuild(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Self> {
        let mut animator = self.animator.rebuild(device, queue)?;
        let c = &self.character;
        let joints = c
            .library
            .skeletons()
            .get(c.skeleton.0 as usize)
            .map_or(0, |s| s.joint_count());
        let renderer = SkinnedRenderer::new(
            device,
            &animator,
            &c.mesh,
            joints,
            color_format,
            depth_format,
            sample_count,
        )?;
        let props = prop_renderer(
            device,
            &animator,
            &self.character,
            self.agents.len(),
            color_format,
            depth_format,
            sample_count,
        )?;
        // The marks were on the lost device: the new ring starts empty.
        let footprints = if self.footprints.is_some() {
            footprints(
                device,
                &mut animator,
                &self.character,
                self.agents.len(),
                color_format,
                depth_format,
                sample_count,
            )?
        } else {
            None
        };
        Ok(Self {
            animator,
            character: self.character.clone(),
            renderer,
            ground: GroundRenderer::new(device, color_format, depth_format, sample_count),
            props,
            footprints,
            seconds: self.seconds,
            event_window: self.event_window.clone(),
            held: self.held.clone(),
            agents: self.agents.clone(),
            half_extent: self.half_extent,
            moving: self.moving,
            roams: self.roams,
            animation_paused: self.animation_paused,
            rng: self.rng.clone(),
            clock: self.clock,
            target: self.target,
        })
    }

    /// Half the side of the square field the crowd occupies, metres.
    #[must_use]
    pub fn half_extent(&self) -> f32 {
        self.half_extent
    }

    /// Number of characters.
    #[must_use]
    pub fn count(&self) -> usize {
        self.agents.len()
    }

    /// Removes characters from `count` on.
    pub fn truncate(&mut self, count: usize) {
        self.agents.truncate(count);
        self.animator.truncate(count);
    }

    /// Whether members move across the field (`true`) or animate in place, frozen where they
    /// stand. Members of a crowd built with [`CrowdDesc::moving`] `false` have no course, so they
    /// stay in place either way.
    pub fn set_moving(&mut self, moving: bool) {
        // Only members that roam (a crowd built moving) move by root motion.
        if self.character.root_motion && self.roams && moving != self.moving {
            for (i, a) in self.agents.iter().enumerate() {
                if !moving {
                    // Frozen where it was last read back (root motion off, the world is the CPU's).
                    let _ = self.animator.set_world(i, self.character.world(a.position, a.heading));
                }
                let _ = self.animator.set_root_motion(i, moving);
            }
        }
        self.moving = moving;
    }

    /// Whether members move across the field (see [`Crowd::set_moving`]).
    #[must_use]
    pub fn is_moving(&self) -> bool {
        self.moving
    }

    /// Pauses or resumes the animation clocks only: while paused, [`Crowd::update`] still moves
    /// the members but hands the animator a `dt` of 0.
    pub fn set_animation_paused(&mut self, paused: bool) {
        self.animation_paused = paused;
    }

    /// Whether the animation clocks are paused (see [`Crowd::set_animation_paused`]).
    #[must_use]
    pub fn is_animation_paused(&self) -> bool {
        self.animation_paused
    }

    /// Advances the crowd by `dt` seconds: steers and moves walkers and runners (wrapping at the
    /// field's edge) and uploads the frame's `dt` (0 while the animation is paused). With root
    /// motion the GPU moves them: the crowd sets their blend parameters and turn rates, and reads
    /// where they are back three frames late, always three (waiting, only when the GPU is further
    /// behind, so that what the crowd decides does not depend on the GPU's pace): to aim, and to
    /// move a member who left the field to the other side. Without root motion it moves them at
    /// their course's velocity.
    pub fn update(&mut self, queue: &wgpu::Queue, dt: f32) {
        let root_motion = self.character.root_motion;
        let frame = self.animator.frame() + 1;
        if self.moving && dt != 0.0 {
            self.clock += dt;
            // The target everyone aiming follows: a point circling the field at head height.
            let angle = self.clock * 0.3;
            self.target = Vec3::new(angle.cos(), 0.0, angle.sin()) * self.half_extent * 0.6 + Vec3::Y * 1.6;
            let e = self.half_extent;
            for (i, a) in self.agents.iter_mut().enumerate() {
                if let Some(w) = &mut a.wander {
                    let turn = w.turn;
                    wander(&mut self.animator, &self.character, &mut self.rng, i, w, dt);
                    layers(
                        &mut self.animator,
                        &self.character,
                        &mut self.rng,
                        i,
                        w,
                        dt,
                        a.position,
                        a.heading,
                        self.target,
                    );
                    if root_motion {
                        if w.turn != turn {
                            let _ = self.animator.set_root_turn(i, w.turn);
                        }
                    } else {
                        a.heading += w.turn * dt;
                        let v = Quat::from_rotation_y(a.heading) * Vec3::new(w.velocity.x, 0.0, w.velocity.y);
                        a.velocity = Vec2::new(v.x, v.z);
                    }
                }
                if root_motion {
                    // Off the field (as last read back, and not since a teleport): to the other
                    // side, where root motion carries on.
                    let wrapped = (a.position + Vec2::splat(e)).rem_euclid(Vec2::splat(2.0 * e)) - Vec2::splat(e);
                    if wrapped.distance_squared(a.position) > 1e-6 && a.teleported_at == 0 {
                        a.position = wrapped;
                        a.teleported_at = frame;
                        let _ = self.animator.set_world(i, self.character.world(a.position, a.heading));
                    }
                    continue;
                }
                if a.velocity == Vec2::ZERO && a.wander.is_none() {
                    continue;
                }
                a.position += a.velocity * dt;
                a.position = (a.position + Vec2::splat(e)).rem_euclid(Vec2::splat(2.0 * e)) - Vec2::splat(e);
                // A world matrix built here is always finite and affine.
                let _ = self.animator.set_world(i, self.character.world(a.position, a.heading));
            }
        }
        let dt = if self.animation_paused { 0.0 } else { dt };
        self.animator.prepare(queue, dt);
        self.seconds += dt;
        if let Some((marks, _)) = &self.footprints {
            marks.update(queue, &self.animator, self.seconds);
        }
        // Events per second over the last second of frames (read back a frame late).
        let events = self.read_back(frame);
        self.event_window.push_back((dt, events));
        let mut span: f32 = self.event_window.iter().map(|(d, _)| d).sum();
        while span > 1.0 && self.event_window.len() > 1 {
            span -= self.event_window.pop_front().map_or(0.0, |(d, _)| d);
        }
    }

    /// Takes in what frames before `frame` computed: with root motion the members' places in
    /// frame `frame − 3` (waiting for them if the GPU is that far behind). Returns the events of
    /// the frames read back.
    fn read_back(&mut self, frame: u64) -> usize {
        let mut got = self.animator.take_readbacks();
        let wanted = frame.saturating_sub(ROOT_LAG);
        let watching = self.character.root_motion && self.roams && self.moving && wanted > 0;
        if watching && self.held.iter().chain(&got).all(|r| r.frame < wanted) {
            self.animator.wait_readbacks();
            got.extend(self.animator.take_readbacks());
        }
        let events = got.iter().map(|r| r.events.len()).sum();
        if !watching {
            return events;
        }
        // Only the frames whose places are still to be used are kept.
        self.held.extend(got);
        self.held.retain(|r| r.frame >= wanted);
        let Some(r) = self.held.iter().find(|r| r.frame == wanted) else {
            return events;
        };
        for (a, root) in self.agents.iter_mut().zip(&r.outputs) {
            if a.teleported_at != 0 && r.frame < a.teleported_at {
                continue;
            }
            a.teleported_at = 0;
            let w = &root.world;
            a.position = Vec2::new(w.x.w, w.z.w);
            // The heading of the model's +Z in the world.
            a.heading = w.x.z.atan2(w.z.z);
        }
        events
    }

    /// Clip events the GPU fired per second of animation, over the last second (footsteps, for
    /// the built-in character); 0 when the character has none.
    #[must_use]
    pub fn events_per_second(&self) -> f32 {
        let span: f32 = self.event_window.iter().map(|(d, _)| d).sum();
        let events: usize = self.event_window.iter().map(|(_, n)| n).sum();
        if span > 0.0 { events as f32 / span } else { 0.0 }
    }

    /// A renderer of the crowd's footprints for another target (a screenshot's, say); `None`
    /// when the character has none.
    ///
    /// Errors: a pipeline the device refuses.
    pub fn footprint_renderer(
        &self,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Option<FootprintRenderer>> {
        self.footprints
            .as_ref()
            .map(|(marks, _)| marks.renderer(device, color_format, depth_format, sample_count))
            .transpose()
    }

    /// The footprints' clock now (for [`FootprintRenderer::set_view`]).
    #[must_use]
    pub fn footprint_time(&self) -> f32 {
        self.seconds
    }

    /// Uploads the camera to the renderers.
    pub fn set_camera(&self, queue: &wgpu::Queue, camera: &Camera) {
        self.renderer.set_camera(queue, camera);
        self.ground.set_camera(queue, camera);
        if let Some(p) = &self.props {
            p.set_camera(queue, camera);
        }
        if let Some((_, r)) = &self.footprints {
            r.set_view(queue, camera, self.seconds);
        }
    }

    /// A renderer of the character's prop in the hands of its holders (every
    /// [`HeldProp::every`]-th member) for another target (a screenshot's, say); `None` when the
    /// character has no prop.
    ///
    /// Errors: as [`PropRenderer::new`].
    pub fn prop_renderer(
        &self,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<Option<PropRenderer>> {
        prop_renderer(
            device,
            &self.animator,
            &self.character,
            self.agents.len(),
            color_format,
            depth_format,
            sample_count,
        )
    }

    /// Records the animation passes, then the footprints' stamping pass.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.animator.encode(encoder);
        self.encode_footprints(encoder);
    }

    /// Records the footprints' stamping pass (after the animator's passes, when those are
    /// recorded by hand, with timestamps say).
    pub fn encode_footprints(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some((marks, _)) = &self.footprints {
            marks.encode(encoder, &self.animator);
        }
    }

    /// Draws the ground, the footprints on it, every character and the props they hold.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        self.ground.draw(pass);
        if let Some((_, r)) = &self.footprints {
            r.draw(pass);
        }
        self.renderer.draw(pass, 0..self.agents.len() as u32);
        if let Some(p) = &self.props {
            p.draw(pass, &self.animator);
        }
    }

    /// A camera that frames the whole crowd from above and to the side (distances scale with
    /// the character's size).
    #[must_use]
    pub fn overview_camera(&self, aspect: f32) -> Camera {
        let (f, h) = (self.character.relative_footprint, self.character.relative_height);
        let e = self.half_extent.max(2.0 * f);
        let target = Vec3::new(0.0, 0.6 * h, 0.0);
        let eye = Vec3::new(e * 0.9, e * 0.75 + 1.5 * h, e * 1.6 + 3.0 * f);
        Camera::look_at(eye, target, 40f32.to_radians(), aspect, 0.1, 2000.0)
    }
}

/// A random course in character space (m/s): walk, run, strafe, back up, or a diagonal.
fn random_course(r: &mut SplitMix) -> Vec2 {
    let pick = r.unit();
    if pick < 0.4 {
        Vec2::new(r.range(-0.2, 0.2), r.range(1.1, 1.7))
    } else if pick < 0.65 {
        Vec2::new(r.range(-0.3, 0.3), r.range(2.6, 3.5))
    } else if pick < 0.8 {
        let side = if r.unit() < 0.5 { -1.0 } else { 1.0 };
        Vec2::new(side * r.range(0.8, 1.2), r.range(-0.2, 0.4))
    } else if pick < 0.88 {
        Vec2::new(r.range(-0.2, 0.2), r.range(-1.0, -0.7))
    } else {
        Vec2::from_angle(r.range(0.0, std::f32::consts::TAU)) * r.range(0.8, 2.0)
    }
}

/// One wandering member's frame: decisions (a new course, a turn, stopping or starting with a
/// cross-fade), and its blend parameters easing towards its course.
fn wander(animator: &mut Animator, c: &Character, r: &mut SplitMix, i: usize, w: &mut Wander, dt: f32) {
    let Some(tree) = c.locomotion else { return };
    w.timer -= dt;
    if w.timer <= 0.0 {
        w.timer = r.range(2.0, 6.0);
        let smooth = Transition {
            duration: STOP_START_FADE,
            curve: Curve::Smooth,
            frozen: false,
        };
        if w.stopped {
            // Start again: cross-fade from idle into the locomotion blend.
            w.stopped = false;
            w.target = random_course(r);
            w.velocity = w.target * 0.5;
            let desc = InstanceDesc::tree(tree, [w.velocity.x, w.velocity.y, 0.0, 0.0]);
            let _ = animator.play(i, &InstanceDesc { time: r.unit(), ..desc }, Some(smooth));
        } else if r.unit() < 0.15 {
            // Stop: cross-fade to idle, as a state of its own.
            w.stopped = true;
            w.target = Vec2::ZERO;
            let idle = InstanceDesc {
                time: r.unit() * 2.0,
                ..InstanceDesc::new(c.clips[0])
            };
            let _ = animator.play(i, &idle, Some(smooth));
        } else {
            w.target = random_course(r);
            w.turn = if r.unit() < 0.5 { r.range(-0.5, 0.5) } else { 0.0 };
        }
    }
    if w.stopped {
        w.velocity *= (1.0 - EASE * 2.0 * dt).max(0.0);
        w.turn = 0.0;
        return;
    }
    let next = w.velocity + (w.target - w.velocity) * (EASE * dt).min(1.0);
    if next.distance_squared(w.velocity) > 1e-8 {
        w.velocity = next;
        let aim = animator.instance(i).map_or(glam::Vec4::ZERO, |inst| inst.params);
        let _ = animator.set_parameters(i, [next.x, next.y, aim.z, aim.w]);
    }
}

/// One member's layers this frame: flinches at random moments (a one-shot additive layer), and
/// for aiming members the aim offset's parameters from the target's direction in character space.
#[expect(clippy::too_many_arguments, reason = "one call site, every argument distinct")]
fn layers(
    animator: &mut Animator,
    c: &Character,
    r: &mut SplitMix,
    i: usize,
    w: &mut Wander,
    dt: f32,
    position: Vec2,
    heading: f32,
    target: Vec3,
) {
    let Some(l) = c.layers else { return };
    w.flinch -= dt;
    if w.flinch <= 0.0 {
        if w.flinching {
            w.flinching = false;
            w.flinch = r.range(4.0, 25.0);
            let _ = animator.set_layer(i, FLINCH_SLOT, None, false);
        } else {
            w.flinching = true;
            w.flinch = c.library.clip_duration(l.flinch).unwrap_or(0.6);
            let flinch = Layer {
                once: true,
                weight: r.range(0.6, 1.0),
                ..Layer::clip(LayerMode::AdditiveLocal, l.flinch)
            };
            let _ = animator.set_layer(i, FLINCH_SLOT, Some(&flinch), true);
        }
    }
    if w.role == Role::Aiming {
        // The target's direction relative to where the member faces: yaw and pitch, normalized
        // to the aim offset's ±35° and ±25°.
        let to = target - Vec3::new(position.x, 1.4, position.y);
        let local = Quat::from_rotation_y(-heading) * to;
        let yaw = (-local.x).atan2(local.z);
        let pitch = local.y.atan2(Vec2::new(local.x, local.z).length());
        let params = [
            w.velocity.x,
            w.velocity.y,
            (yaw / 35f32.to_radians()).clamp(-1.0, 1.0),
            (pitch / 25f32.to_radians()).clamp(-1.0, 1.0),
        ];
        let _ = animator.set_parameters(i, params);
    }
}
