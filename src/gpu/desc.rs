//! What users say to an animator: what an instance plays ([`InstanceDesc`], [`LoopMode`]), how it
//! changes state ([`Transition`], [`Curve`]), its layers ([`Layer`], [`LayerMode`]), how it is
//! skinned ([`Skinning`]) and the animator's capacity ([`AnimatorDesc`]).

use crate::blend::BlendTreeId;
use crate::library::{ClipId, SkeletonId};
use glam::Mat4;

/// How an instance's clock treats the clip's end (Game Engine Architecture §11.4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LoopMode {
    /// Play once: local time clamped to `[0, T]`.
    Once,
    /// Loop N times (N ≥ 1): clamped to `[0, N·T]`, sampled at `t mod T`, holding the last pose.
    Repeat(u32),
    /// Loop forever: `t mod T`.
    #[default]
    Forever,
}

/// What an instance plays and where it stands. Its ids must be of the animator's library:
/// [`crate::gpu::Controller::add_instance`], `set_instance` and `play` refuse others with
/// [`crate::Error::ForeignId`].
///
/// `#[non_exhaustive]` (it gains a field with each thing an instance can be given): start from
/// [`InstanceDesc::new`] or [`InstanceDesc::tree`] and set the rest with the `with_*` methods
/// (`InstanceDesc::new(walk).with_time(0.5).with_world(at)`), or assign the fields.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct InstanceDesc {
    /// The clip (when `tree` is `None`).
    pub clip: ClipId,
    /// A blend tree to play instead of `clip`; `time` is then a phase in [0, 1).
    pub tree: Option<BlendTreeId>,
    /// Blend parameters of the tree (unused entries 0).
    pub params: [f32; 4],
    /// Local time to start at, seconds.
    pub time: f32,
    /// Playback rate: 1 is normal speed, negative plays backward, 0 pauses.
    pub rate: f32,
    /// Loop mode.
    pub loop_mode: LoopMode,
    /// `world_from_model`; must be affine and finite.
    pub world: Mat4,
    /// RGBA colour for the built-in renderer.
    pub tint: [u8; 4],
    /// How its vertices are skinned: linear blending (the default), dual quaternions or a blend
    /// of the two; anything but [`Skinning::Linear`] needs an animator made with
    /// [`AnimatorDesc::dual_quaternion`].
    pub skinning: Skinning,
    /// The skeleton that plays it: `None` for the clip's (or tree's) own; a skeleton added with
    /// [`crate::LibraryBuilder::add_retargeted_skeleton`] from the clip's skeleton plays it
    /// retargeted on the GPU (its proportions, the clip's motion). [`crate::gpu::Controller::play`]
    /// and `set_instance` with `None` keep an instance's retargeted skeleton when it can play the
    /// new state.
    pub skeleton: Option<SkeletonId>,
}

/// How an instance's vertices are skinned (its skinning shader reads it per instance; change it
/// at any time with [`crate::gpu::Controller::set_skinning`]).
///
/// Linear blend skinning sums the joints' matrices: cheap, but a joint twisted far from its
/// neighbours pinches the skin (the "candy wrapper" at a twisted forearm) and a bent one loses
/// volume. Dual-quaternion skinning (Kavan et al. 2008) blends the joints' rigid motions instead
/// and keeps the volume; scale and shear are blended linearly first and the rigid motion after
/// ("two-phase" skinning), so scaled joints skin right too. A blend mixes the two results.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Skinning {
    /// Linear blend skinning.
    #[default]
    Linear,
    /// Dual-quaternion skinning.
    DualQuaternion,
    /// `(1 − a)` × linear + `a` × dual quaternion, `a` in `[0, 1]`; a shader of your own can take
    /// `a` per vertex instead (the skinning module's `wgpu_anim_skin_blended`).
    Blend(f32),
}

impl Skinning {
    /// The dual-quaternion amount the skinning shader reads: 0 linear, 1 dual quaternion; `None`
    /// for a blend amount that is not finite or outside `[0, 1]`.
    #[must_use]
    pub fn dual_amount(self) -> Option<f32> {
        match self {
            Skinning::Linear => Some(0.0),
            Skinning::DualQuaternion => Some(1.0),
            Skinning::Blend(a) if (0.0..=1.0).contains(&a) => Some(a),
            Skinning::Blend(_) => None,
        }
    }
}

impl InstanceDesc {
    /// Plays `clip` from time 0 at rate 1, looping forever, at the origin, in light grey.
    #[must_use]
    pub fn new(clip: ClipId) -> Self {
        Self {
            clip,
            tree: None,
            params: [0.0; 4],
            time: 0.0,
            rate: 1.0,
            loop_mode: LoopMode::Forever,
            world: Mat4::IDENTITY,
            tint: [200, 200, 200, 255],
            skinning: Skinning::Linear,
            skeleton: None,
        }
    }
}

impl InstanceDesc {
    /// Plays blend tree `tree` with parameters `params` from phase 0, looping forever. (`clip`,
    /// unused while `tree` is set, is clip 0 of the tree's library.)
    #[must_use]
    pub fn tree(tree: BlendTreeId, params: [f32; 4]) -> Self {
        Self {
            tree: Some(tree),
            params,
            ..Self::new(ClipId::new(0, tree.library()))
        }
    }
}

/// The shape of a cross-fade's weight over time (in JSON `"linear"` or `"smooth"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(
    feature = "json",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
pub enum Curve {
    /// β = u.
    #[default]
    Linear,
    /// β = u²(3 − 2u): starts and ends gently.
    Smooth,
}

/// How a transition gets from what an instance shows to its new state.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Blending {
    /// Cross-fade (GEA 11.6): both states are evaluated every frame of the transition and mixed
    /// by the weight curve.
    #[default]
    CrossFade,
    /// Inertialization (Bollo, GDC 2018): only the new state is evaluated; the difference from
    /// it to what was shown, and that difference's velocity, decay to zero over the duration,
    /// each joint's along a quintic that never passes zero. Needs
    /// [`AnimatorDesc::inertialization`].
    Inertialize,
    /// Dead blending (Holden, 2023): what was shown moves on with its velocity, which halves
    /// every `halflife` seconds (none with 0), and cross-fades (smoothstep) to the new state,
    /// of which only one pose is evaluated. Needs [`AnimatorDesc::inertialization`].
    DeadBlend {
        /// Seconds over which the shown pose's velocity halves.
        halflife: f32,
    },
}

/// A transition from what an instance shows to a new state: a cross-fade, or an inertialized
/// transition that evaluates only the new state ([`Blending`]).
///
/// `#[non_exhaustive]`: start from [`Transition::linear`], [`Transition::inertialize`] or
/// [`Transition::dead_blend`] and set the rest with the `with_*` methods.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Transition {
    /// Length in seconds (0 cuts).
    pub duration: f32,
    /// A cross-fade's weight curve.
    pub curve: Curve,
    /// Stop a cross-fade's source clock when it starts (a *frozen* transition) instead of
    /// letting both clocks run (a *smooth* one).
    pub frozen: bool,
    /// Cross-fade or inertialization.
    pub blending: Blending,
}

impl Transition {
    /// A linear cross-fade of `duration` seconds with both clocks running.
    #[must_use]
    pub fn linear(duration: f32) -> Self {
        Self {
            duration,
            curve: Curve::Linear,
            frozen: false,
            blending: Blending::CrossFade,
        }
    }

    /// An inertialization of `duration` seconds ([`Blending::Inertialize`]).
    #[must_use]
    pub fn inertialize(duration: f32) -> Self {
        Self {
            blending: Blending::Inertialize,
            ..Self::linear(duration)
        }
    }

    /// Dead blending over `duration` seconds whose extrapolation's velocity halves every quarter
    /// of it ([`Blending::DeadBlend`]).
    #[must_use]
    pub fn dead_blend(duration: f32) -> Self {
        Self {
            blending: Blending::DeadBlend {
                halflife: 0.25 * duration,
            },
            ..Self::linear(duration)
        }
    }
}

/// How a layer combines with the pose below it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LayerMode {
    /// Replaces the pose below, joint by joint, by weight × mask.
    #[default]
    Override,
    /// Adds a difference pose in each joint's local space.
    AdditiveLocal,
    /// Adds a difference pose whose rotations apply in the character's space (aim offsets).
    AdditiveMesh,
}

/// A layer on top of an instance's base state: a clip or a blend tree (of difference clips for
/// the additive modes), with a weight and an optional mask, all of the animator's library
/// ([`crate::gpu::Controller::set_layer`] refuses others with [`crate::Error::ForeignId`]).
///
/// `#[non_exhaustive]`: start from [`Layer::clip`] or [`Layer::tree`] and set the rest with the
/// `with_*` methods.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Layer {
    /// How it combines.
    pub mode: LayerMode,
    /// Weight β in [0, 1].
    pub weight: f32,
    /// The clip it plays (when `tree` is `None`).
    pub clip: Option<ClipId>,
    /// The blend tree it plays, with the instance's parameters.
    pub tree: Option<BlendTreeId>,
    /// Per-joint weights.
    pub mask: Option<crate::library::MaskId>,
    /// Where it starts: seconds (clip) or phase (tree).
    pub start: f32,
    /// Playback rate.
    pub rate: f32,
    /// Play once and hold the last frame instead of looping.
    pub once: bool,
    /// Sample the clip at the time given by this blend parameter (0..4) instead of a clock.
    pub time_parameter: Option<u32>,
}

impl Layer {
    /// A looping clip layer at weight 1, no mask.
    #[must_use]
    pub fn clip(mode: LayerMode, clip: ClipId) -> Self {
        Self {
            mode,
            weight: 1.0,
            clip: Some(clip),
            tree: None,
            mask: None,
            start: 0.0,
            rate: 1.0,
            once: false,
            time_parameter: None,
        }
    }

    /// A blend-tree layer at weight 1, no mask.
    #[must_use]
    pub fn tree(mode: LayerMode, tree: BlendTreeId) -> Self {
        Self {
            mode,
            weight: 1.0,
            clip: None,
            tree: Some(tree),
            mask: None,
            start: 0.0,
            rate: 1.0,
            once: false,
            time_parameter: None,
        }
    }
}

/// Capacity of an [`crate::Animator`]; its buffers are allocated once.
///
/// Instances live in *pages*: each page has its own instance, clock, blend list, pose and
/// palette buffers, each within one storage binding of the device, and a frame records the same
/// dispatches for every page. A crowd of any size that fits in memory runs, whatever the
/// device's largest binding.
///
/// It gains a field with each feature an animator can keep room for, so it is
/// `#[non_exhaustive]`: start from [`AnimatorDesc::default`] and set what you need with the
/// `with_*` methods (`AnimatorDesc::default().with_max_instances(10_000).with_culling(true)`), or
/// assign the fields.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct AnimatorDesc {
    /// Most instances at once.
    pub max_instances: u32,
    /// Most joints over all instances; `None` means `max_instances` × the largest skeleton.
    pub max_joints: Option<u32>,
    /// Most instances per page; `None`: as many as the device's storage binding size allows.
    /// (Each page holds its share of `max_joints`, when that is given.)
    pub page_instances: Option<u32>,
    /// Keep a dual-quaternion palette beside the matrices, so that instances may skin with dual
    /// quaternions ([`Skinning`]): 64 more bytes per joint of capacity, written each frame only
    /// for the joints of instances that use it. They are a section of each page's palette
    /// buffer, which then holds 112 bytes per joint and bounds the page: without layers a page
    /// holds 48/112 as many characters (more pages, each a dispatch per pass). Off by default.
    pub dual_quaternion: bool,
    /// Room for this many morph weights per instance (the most targets of any mesh its
    /// characters morph, [`crate::MorphSet::target_count`]), so that instances may morph
    /// ([`crate::gpu::Controller::set_morph_weights`]): 12 bytes each per instance of capacity
    /// (the weights drawn, the instance's own and the snapshot an interrupting cross-fade
    /// blends from), at most
    /// [`crate::layout::MAX_MORPH_TARGETS`]. 0 by default: no morphing.
    pub morph_weights: u32,
    /// The ground under IK's ground goals ([`crate::ik::IkTarget::Ground`]): WGSL defining
    /// `fn ground_height(p: vec2<f32>) -> f32`, the ground's height at world `(x, z) = p`, with
    /// any helpers it needs (a texture is not bound: a function of the position). `None`, the
    /// default: flat ground at height 0 ([`crate::shaders::FLAT_GROUND`]).
    pub ground: Option<&'static str>,
    /// Keep room for inertialized transitions ([`Transition::inertialize`],
    /// [`Transition::dead_blend`]): 48 more bytes per joint of capacity, where each joint keeps
    /// its velocity. Off by default: such a transition is then refused, and the passes are
    /// compiled without the code that applies one.
    pub inertialization: bool,
    /// Let characters play layers on top of their base state ([`Layer`],
    /// [`crate::gpu::Controller::set_layer`]). On by default. Off, the `clock`, `sample` and
    /// `local_to_model` passes (and the fused pass) are compiled without the code that plays and
    /// blends layers, and [`crate::gpu::Controller::set_layer`] refuses one: a GPU branches
    /// around that code for a character without layers, but a CPU adapter such as lavapipe runs
    /// it masked for every character and joint, about a quarter of the `sample` pass and half
    /// the `clock` pass of a crowd playing one clip each
    /// (`benches/results/2026-11-27-1245-passes-without-unused-features.md`). Off, the local
    /// poses also keep no mesh-space deltas: 48 bytes less per joint of capacity, and pages of
    /// half as many characters again where the local poses are a page's largest buffer.
    pub layers: bool,
    /// Cull: each frame, the clock tests every character's bounds against a view
    /// ([`crate::gpu::Controller::set_cull_view`], [`crate::gpu::Controller::set_bounds`]); only those seen (and those on
    /// a frame that keeps a pose for a transition) are sampled, blended, propagated and given
    /// palettes, by indirect dispatch over a list the GPU makes, and a culled draw
    /// ([`crate::gpu::SkinBinding::draw_visible`]) draws only them. Clocks, events, root motion and
    /// float curves stay exact for every character. 4 bytes per instance of capacity and one small
    /// dispatch per page per frame. Off by default.
    ///
    /// wgpu validates each indirect dispatch's arguments with a dispatch of its own where the
    /// instance has [`wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL`] (wgpu's default): 57 %
    /// of what a culled page costs the CPU to record on lavapipe
    /// (`benches/results/2026-11-27-1701-encode-counted.md`). The arguments the cull pass writes
    /// never need it (a page's workgroups are split over y past 65,535, as for a direct
    /// dispatch); whether to turn it off is the application's, for its own indirect calls too.
    pub culling: bool,
    /// With culling, update-rate LOD ([`crate::gpu::Controller::set_update_rates`]) draws a
    /// character between its evaluations with an interpolation of its last two evaluated
    /// palettes (the matrices blended linearly; the pose shown one update period late) instead of
    /// holding the last: 96 more bytes per joint of capacity, kept after the palettes. Dual
    /// quaternions and socket matrices hold. Off by default.
    pub lod_interpolation: bool,
    /// How the fused pass walks each character's hierarchy ([`HierarchyWalk`]) where a workgroup
    /// works on a character (with [`CharacterThreads::One`] each thread walks its own); both give
    /// the same matrices. [`HierarchyWalk::Auto`] by default.
    pub hierarchy_walk: HierarchyWalk,
    /// How many threads work on each character in the passes that run a workgroup per character
    /// ([`CharacterThreads`]); all give the same results. [`CharacterThreads::Auto`] by default.
    pub character_threads: CharacterThreads,
}

/// How many threads work on each character, striding over its joints, in the passes that run a
/// workgroup per character: `sample`, `ik`, `palette` and the fused pass. Every joint is computed
/// by the same code whichever thread takes it: the results are the same, bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CharacterThreads {
    /// [`CharacterThreads::Wide`] on a GPU, [`CharacterThreads::One`] on a CPU adapter
    /// (`wgpu::DeviceType::Cpu`, such as lavapipe or SwiftShader).
    #[default]
    Auto,
    /// A workgroup of [`crate::layout::WORKGROUP_SIZE`] (64) threads: a GPU runs a character's
    /// joints at once.
    Wide,
    /// A workgroup of [`crate::layout::NARROW_THREADS`] (8) threads, one SIMD group of a CPU
    /// adapter (lavapipe's 256-bit vectors hold 8 lanes); [`CharacterThreads::One`] measured
    /// cheaper there still. A CPU adapter runs a workgroup's SIMD
    /// groups one after another, each through every step of the pass and everything done once
    /// per character; one SIMD group per character measured 0.66 to 0.92 of the `sample` pass's
    /// instructions and 0.57 of the `palette` pass's on lavapipe
    /// (`benches/results/2026-11-28-0200-character-threads.md`).
    Narrow,
    /// One thread per character, all of its joints in turn, in workgroups of
    /// [`crate::layout::NARROW_THREADS`] (8) characters: a CPU adapter's SIMD lanes run eight
    /// characters' same joint together, where they run one character's eight joints with
    /// [`CharacterThreads::Narrow`], and no character's step waits on a barrier for another
    /// thread's (but IK's, whose pass still takes its workgroup's characters one at a time, all
    /// threads on each). The fused pass then keeps its poses in the local pose buffer, as the
    /// staged `sample` pass does, each joint's model matrix in place of its local pose. On lavapipe it took the `sample` pass to
    /// 0.69 to 1.00 of its instructions per joint-sample against `Narrow`, `palette` to 0.87 and
    /// the fused pass to 0.52 to 0.80, 0.96 to 1.02 of the staged passes' sum
    /// (`benches/results/2026-11-28-1530-thread-per-character.md`). What a GPU, whose lanes
    /// would each walk a whole character, does not want.
    One,
}

impl CharacterThreads {
    /// The threads per character: `None` for [`CharacterThreads::Auto`], undecided
    /// ([`crate::Animator::character_threads`] says what an animator chose).
    ///
    /// ```
    /// use wgpu_anim::gpu::CharacterThreads;
    /// assert_eq!(CharacterThreads::Wide.count(), Some(64));
    /// assert_eq!(CharacterThreads::Narrow.count(), Some(8));
    /// assert_eq!(CharacterThreads::One.count(), Some(1));
    /// assert_eq!(CharacterThreads::Auto.count(), None);
    /// ```
    #[must_use]
    pub fn count(self) -> Option<u32> {
        match self {
            Self::Auto => None,
            Self::Wide => Some(crate::layout::WORKGROUP_SIZE),
            Self::Narrow => Some(crate::layout::NARROW_THREADS),
            Self::One => Some(1),
        }
    }

    /// The characters a workgroup of the `sample`, `ik`, `palette` and fused passes works on:
    /// [`crate::layout::NARROW_THREADS`] with [`CharacterThreads::One`], else 1 (also for
    /// [`CharacterThreads::Auto`], undecided). WGSL `CHARACTERS_PER_WORKGROUP`.
    ///
    /// ```
    /// use wgpu_anim::gpu::CharacterThreads;
    /// assert_eq!(CharacterThreads::One.characters_per_workgroup(), 8);
    /// assert_eq!(CharacterThreads::Narrow.characters_per_workgroup(), 1);
    /// ```
    #[must_use]
    pub fn characters_per_workgroup(self) -> u32 {
        match self {
            Self::One => crate::layout::NARROW_THREADS,
            _ => 1,
        }
    }

    /// `auto`, `wide`, `narrow` or `one`: the name tools print and parse.
    ///
    /// ```
    /// use wgpu_anim::gpu::CharacterThreads;
    /// for t in [CharacterThreads::Auto, CharacterThreads::Wide, CharacterThreads::Narrow, CharacterThreads::One] {
    ///     assert_eq!(CharacterThreads::from_name(t.name()), Some(t));
    /// }
    /// assert_eq!(CharacterThreads::from_name("many"), None);
    /// ```
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Wide => "wide",
            Self::Narrow => "narrow",
            Self::One => "one",
        }
    }

    /// The variant named `name` ([`CharacterThreads::name`]).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Auto, Self::Wide, Self::Narrow, Self::One]
            .into_iter()
            .find(|t| t.name() == name)
    }

    /// What the variant is, in words: `a workgroup per character` ([`CharacterThreads::Wide`],
    /// what a GPU runs), `a SIMD group per character` ([`CharacterThreads::Narrow`]: on a CPU
    /// adapter the nearest to a GPU's way), `a thread per character` ([`CharacterThreads::One`],
    /// a CPU adapter's default, which no GPU runs), `decided by the adapter`.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Self::Auto => "decided by the adapter",
            Self::Wide => "a workgroup per character",
            Self::Narrow => "a SIMD group per character",
            Self::One => "a thread per character",
        }
    }
}

/// How the fused pass ([`crate::Animator::set_fused`]) walks a character's hierarchy, parents
/// before children, in a workgroup that works on one character ([`CharacterThreads::Wide`] or
/// [`CharacterThreads::Narrow`]; with [`CharacterThreads::One`], a CPU adapter's default, each
/// thread walks its own character's joints in order whatever this says). The model matrices are
/// the same either way, bit for bit: each joint's is its parent's times its local pose, in the
/// same operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HierarchyWalk {
    /// [`HierarchyWalk::Levels`] on a GPU, [`HierarchyWalk::OneThread`] on a CPU adapter
    /// (`wgpu::DeviceType::Cpu`, such as lavapipe or SwiftShader).
    #[default]
    Auto,
    /// A level of the hierarchy at a time, the joints of one depth on threads of their own, a
    /// barrier between levels (the order [`crate::AnimationLibrary::levels`] keeps): as many
    /// steps as the skeleton has levels (12 for the built-in mannequin's 53 joints). What a GPU,
    /// which runs a level's joints at once, wants.
    Levels,
    /// One thread walks every joint while the others wait: as many steps as joints. A CPU
    /// adapter runs a workgroup's SIMD groups one after another, each through every level and
    /// barrier of a walk by levels, which measured slower there
    /// (`benches/results/2026-11-27-1030-fused-clock-pass-and-levels.md`).
    OneThread,
}

builders!(InstanceDesc {
    with_clip => clip: ClipId,
    with_tree => tree: Option<BlendTreeId>,
    with_params => params: [f32; 4],
    with_time => time: f32,
    with_rate => rate: f32,
    with_loop_mode => loop_mode: LoopMode,
    with_world => world: Mat4,
    with_tint => tint: [u8; 4],
    with_skinning => skinning: Skinning,
    with_skeleton => skeleton: Option<SkeletonId>,
});

builders!(Transition {
    with_duration => duration: f32,
    with_curve => curve: Curve,
    with_frozen => frozen: bool,
    with_blending => blending: Blending,
});

builders!(Layer {
    with_mode => mode: LayerMode,
    with_weight => weight: f32,
    with_clip => clip: Option<ClipId>,
    with_tree => tree: Option<BlendTreeId>,
    with_mask => mask: Option<crate::library::MaskId>,
    with_start => start: f32,
    with_rate => rate: f32,
    with_once => once: bool,
    with_time_parameter => time_parameter: Option<u32>,
});

builders!(AnimatorDesc {
    with_max_instances => max_instances: u32,
    with_max_joints => max_joints: Option<u32>,
    with_page_instances => page_instances: Option<u32>,
    with_dual_quaternion => dual_quaternion: bool,
    with_morph_weights => morph_weights: u32,
    with_ground => ground: Option<&'static str>,
    with_inertialization => inertialization: bool,
    with_layers => layers: bool,
    with_culling => culling: bool,
    with_lod_interpolation => lod_interpolation: bool,
    with_hierarchy_walk => hierarchy_walk: HierarchyWalk,
    with_character_threads => character_threads: CharacterThreads,
});

impl Default for AnimatorDesc {
    fn default() -> Self {
        Self {
            max_instances: 1024,
            max_joints: None,
            page_instances: None,
            dual_quaternion: false,
            morph_weights: 0,
            ground: None,
            inertialization: false,
            layers: true,
            culling: false,
            lod_interpolation: false,
            hierarchy_walk: HierarchyWalk::Auto,
            character_threads: CharacterThreads::Auto,
        }
    }
}
