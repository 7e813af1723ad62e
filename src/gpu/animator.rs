//! [`Animator`]: the clip library and every instance's state in GPU buffers, and the compute
//! passes of a frame recorded into the caller's encoder.

use super::GpuLibrary;
use super::{PassTimer, read_buffer, split_dispatch};
use crate::blend::BlendTreeId;
use crate::cpu::Pose;
use crate::error::{Error, Result};
use crate::layout::MAX_FUSED_JOINTS;
use crate::layout::{
    BlendList, GpuClock, GpuFrame, GpuInstance, GpuLayer, GpuLayerDef, KEEP_POSE, LOOP_FOREVER, LOOP_ONCE, LOOP_REPEAT,
    LocalPose, MAX_BLEND_PARAMETERS, TRANSITION_FROZEN, TRANSITION_SMOOTH, WORKGROUP_SIZE, source_kind,
};
use crate::layout::{LAYER_ON, MAX_LAYER_DEFS, MAX_LAYERS, NO_MASK, NO_TIME_PARAMETER, layer_mode};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::Affine;
use crate::shaders::{Access, Resource, Stage, stage_source};
use glam::{Mat4, Vec4};
use std::sync::Arc;

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

/// What an instance plays and where it stands.
#[derive(Clone, Copy, Debug, PartialEq)]
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
        }
    }
}

impl InstanceDesc {
    /// Plays blend tree `tree` with parameters `params` from phase 0, looping forever.
    #[must_use]
    pub fn tree(tree: BlendTreeId, params: [f32; 4]) -> Self {
        Self {
            tree: Some(tree),
            params,
            ..Self::new(ClipId(0))
        }
    }
}

/// The shape of a cross-fade's weight over time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Curve {
    /// β = u.
    #[default]
    Linear,
    /// β = u²(3 − 2u): starts and ends gently.
    Smooth,
}

/// A cross-fade from what an instance shows to a new state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transition {
    /// Length in seconds (0 cuts).
    pub duration: f32,
    /// Weight curve.
    pub curve: Curve,
    /// Stop the source's clock when the transition starts (a *frozen* transition) instead of
    /// letting both clocks run (a *smooth* one).
    pub frozen: bool,
}

impl Transition {
    /// A linear cross-fade of `duration` seconds with both clocks running.
    #[must_use]
    pub fn linear(duration: f32) -> Self {
        Self {
            duration,
            curve: Curve::Linear,
            frozen: false,
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
/// the additive modes), with a weight and an optional mask.
#[derive(Clone, Copy, Debug, PartialEq)]
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
            tree: Some(tree),
            clip: None,
            ..Self::clip(mode, ClipId(0))
        }
    }
}

/// CPU bookkeeping of an instance's transition, to know whether a new one interrupts it.
#[derive(Clone, Copy, Debug, Default)]
struct TransitionTrack {
    started_at: f64,
    duration: f32,
}

/// The bits of `GpuInstance::flags` that describe the transition.
const TRANSITION_BITS: u32 = 15 | TRANSITION_SMOOTH | TRANSITION_FROZEN;

/// A transition that interrupts another, held back one frame: that frame keeps the pose it shows
/// ([`KEEP_POSE`]) as the new transition's source.
#[derive(Clone, Copy, Debug)]
struct HeldPlay {
    /// The instance once the transition starts.
    inst: GpuInstance,
    duration: f32,
    /// A frame keeping the pose has been prepared.
    kept: bool,
}

/// Capacity of an [`Animator`]; its buffers are allocated once.
///
/// Instances live in *pages*: each page has its own instance, clock, blend list, pose and
/// palette buffers, each within one storage binding of the device, and a frame records the same
/// dispatches for every page. A crowd of any size that fits in memory runs, whatever the
/// device's largest binding.
#[derive(Clone, Copy, Debug)]
pub struct AnimatorDesc {
    /// Most instances at once.
    pub max_instances: u32,
    /// Most joints over all instances; `None` means `max_instances` × the largest skeleton.
    pub max_joints: Option<u32>,
    /// Most instances per page; `None`: as many as the device's storage binding size allows.
    /// (Each page holds its share of `max_joints`, when that is given.)
    pub page_instances: Option<u32>,
}

impl Default for AnimatorDesc {
    fn default() -> Self {
        Self {
            max_instances: 1024,
            max_joints: None,
            page_instances: None,
        }
    }
}

/// One page of instances: its buffers and its bind group for each pass.
struct Page {
    /// Global index of its first instance.
    first: usize,
    /// Instances in it.
    len: usize,
    /// Instance capacity.
    max_instances: u32,
    /// Joint capacity: the local pose buffer holds this many current poses, as many snapshots
    /// and as many mesh-space deltas.
    max_joints: u32,
    /// Joints in use.
    joints_used: u32,
    frame_buffer: wgpu::Buffer,
    instance_buffer: wgpu::Buffer,
    clock_buffer: wgpu::Buffer,
    blend_list_buffer: wgpu::Buffer,
    local_buffer: wgpu::Buffer,
    model_buffer: wgpu::Buffer,
    palette_buffer: wgpu::Buffer,
    /// One per stage of [`Stage::COMPUTE`].
    bind_groups: Vec<wgpu::BindGroup>,
    fused_bind_group: Option<wgpu::BindGroup>,
}

/// A stage's pipeline and bind group layout, shared by every page.
struct StagePipeline {
    stage: Stage,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// The GPU side of a crowd: the clip library uploaded once, every instance's parameters, clock,
/// local pose, model pose and palette in storage buffers, and the four compute passes of a frame.
///
/// Per frame: call [`Animator::prepare`] (uploads `dt` and any instance parameters that changed)
/// then [`Animator::encode`] into your command encoder, then draw with the palette buffer.
pub struct Animator {
    gpu_library: Arc<GpuLibrary>,
    max_instances: u32,
    max_workgroups: u32,
    instances: Vec<GpuInstance>,
    /// Page of each instance.
    page_of: Vec<u32>,
    transitions: Vec<TransitionTrack>,
    held: Vec<Option<HeldPlay>>,
    held_list: Vec<usize>,
    seconds: f64,
    /// Instances changed since the last upload (each once), and a mark per instance.
    dirty: Vec<usize>,
    dirty_mark: Vec<bool>,
    clock_writes: Vec<(usize, GpuClock)>,
    layer_defs: Vec<GpuLayerDef>,
    layer_def_indices: std::collections::HashMap<GpuLayerDef, u32>,
    layer_defs_uploaded: usize,
    layer_def_buffer: wgpu::Buffer,
    pages: Vec<Page>,
    passes: Vec<StagePipeline>,
    fused: Option<StagePipeline>,
    use_fused: bool,
    uploaded: u64,
}

/// Workgroup memory the fused path uses: 128 local poses (48 B), three vec4 arrays and a blend
/// list.
const FUSED_WORKGROUP_BYTES: u32 = MAX_FUSED_JOINTS * (48 + 3 * 16) + size_of::<BlendList>() as u32;

fn storage(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// Bytes of one instance's own buffers that count against one binding (the largest per-instance
/// record: the blend list).
const INSTANCE_BYTES: u64 = {
    let a = size_of::<GpuInstance>();
    let b = size_of::<BlendList>();
    (if a > b { a } else { b }) as u64
};
/// Bytes of one joint in the local pose buffer: current pose, snapshot and mesh-space delta.
const LOCAL_JOINT_BYTES: u64 = 3 * size_of::<LocalPose>() as u64;

/// The capacity `(instances, joints)` of each page for `desc` on a device with `limits`: as many
/// instances per page as fit one storage binding (or `desc.page_instances`), with joints for
/// that many of the largest skeleton, or `max_joints` split over the pages.
fn page_layout(limits: &wgpu::Limits, desc: &AnimatorDesc, max_joints: u32, largest: u32) -> Result<Vec<(u32, u32)>> {
    let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    let joints_per_page = (cap / LOCAL_JOINT_BYTES).min(u64::from(u32::MAX)) as u32;
    if largest > joints_per_page {
        return Err(Error::Limit {
            what: format!(
                "a skeleton of {largest} joints needs {} bytes of local poses; the device allows {cap} per storage buffer",
                u64::from(largest) * LOCAL_JOINT_BYTES
            ),
        });
    }
    let mut per_page = (cap / INSTANCE_BYTES).min(u64::from(u32::MAX)) as u32;
    if desc.max_joints.is_none() && largest > 0 {
        per_page = per_page.min(joints_per_page / largest);
    }
    if let Some(p) = desc.page_instances {
        if p == 0 {
            return Err(Error::Limit {
                what: "a page needs room for at least one instance".into(),
            });
        }
        per_page = per_page.min(p);
    }
    let pages = desc
        .max_instances
        .div_ceil(per_page)
        .max(max_joints.div_ceil(joints_per_page));
    let mut out = Vec::with_capacity(pages as usize);
    let (mut instances_left, mut joints_left) = (desc.max_instances, max_joints);
    for k in 0..pages {
        let instances = instances_left.min(per_page);
        let joints = match desc.max_joints {
            None => instances * largest,
            // An even share of the joint budget, within one binding.
            Some(_) => joints_left.div_ceil(pages - k).min(joints_per_page),
        };
        out.push((instances.max(1), joints));
        instances_left -= instances.min(instances_left);
        joints_left -= joints.min(joints_left);
    }
    Ok(out)
}

impl Page {
    /// Allocates page `k`'s buffers and bind groups.
    #[expect(clippy::too_many_arguments, reason = "the page's share of the animator")]
    fn new(
        device: &wgpu::Device,
        k: usize,
        max_instances: u32,
        max_joints: u32,
        gpu_library: &GpuLibrary,
        layer_def_buffer: &wgpu::Buffer,
        passes: &[StagePipeline],
        fused: Option<&StagePipeline>,
    ) -> Self {
        let label = |what: &str| format!("wgpu-anim page {k} {what}");
        let instances = u64::from(max_instances);
        let joints = u64::from(max_joints);
        let frame_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&label("frame")),
            size: size_of::<GpuFrame>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let instance_buffer = storage(device, &label("instances"), instances * size_of::<GpuInstance>() as u64);
        let clock_buffer = storage(device, &label("clocks"), instances * size_of::<GpuClock>() as u64);
        let blend_list_buffer = storage(device, &label("blend lists"), instances * size_of::<BlendList>() as u64);
        // Current local poses, then one snapshot per joint (the source of interrupted transitions),
        // then one mesh-space additive delta per joint (scratch between `sample` and `local_to_model`).
        let local_buffer = storage(device, &label("local poses"), joints * LOCAL_JOINT_BYTES);
        let model_buffer = storage(device, &label("model poses"), joints * size_of::<Affine>() as u64);
        let palette_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&label("palettes")),
            size: (joints * size_of::<Affine>() as u64).max(16),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::VERTEX,
            mapped_at_creation: false,
        });
        let buffer_of = |resource: Resource| -> &wgpu::Buffer {
            match resource {
                Resource::Frame => &frame_buffer,
                Resource::Library => gpu_library.layout_buffer(),
                Resource::LayerDefs => layer_def_buffer,
                Resource::Headers => gpu_library.headers(),
                Resource::Payload => gpu_library.payload(),
                Resource::Instances => &instance_buffer,
                Resource::Clocks => &clock_buffer,
                Resource::BlendLists => &blend_list_buffer,
                Resource::LocalPoses => &local_buffer,
                Resource::ModelPoses => &model_buffer,
                Resource::Palettes => &palette_buffer,
            }
        };
        let bind_group = |pass: &StagePipeline| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(&label(pass.stage.name())),
                layout: &pass.layout,
                entries: &pass
                    .stage
                    .bindings()
                    .iter()
                    .map(|&(resource, _)| wgpu::BindGroupEntry {
                        binding: resource.binding(),
                        resource: buffer_of(resource).as_entire_binding(),
                    })
                    .collect::<Vec<_>>(),
            })
        };
        let bind_groups = passes.iter().map(bind_group).collect();
        let fused_bind_group = fused.map(bind_group);
        Self {
            first: 0,
            len: 0,
            max_instances,
            max_joints,
            joints_used: 0,
            frame_buffer,
            instance_buffer,
            clock_buffer,
            blend_list_buffer,
            local_buffer,
            model_buffer,
            palette_buffer,
            bind_groups,
            fused_bind_group,
        }
    }
}

impl Animator {
    /// Uploads `library` and allocates buffers for `desc`'s capacity on `device`. To share one
    /// upload of a library between animators, use [`Animator::with_library`].
    ///
    /// Errors: a capacity of zero, or buffers larger than the device's
    /// `max_storage_buffer_binding_size` (the message says which and by how much).
    pub fn new(device: &wgpu::Device, library: &AnimationLibrary, desc: &AnimatorDesc) -> Result<Self> {
        Self::with_library(device, GpuLibrary::new(device, library)?, desc)
    }

    /// Allocates buffers for `desc`'s capacity on `device`, playing a library already on the GPU.
    ///
    /// Errors: as [`Animator::new`].
    pub fn with_library(device: &wgpu::Device, gpu_library: Arc<GpuLibrary>, desc: &AnimatorDesc) -> Result<Self> {
        let library = gpu_library.library();
        let largest = library.gpu_skeletons.iter().map(|s| s.joint_count).max().unwrap_or(0);
        if desc.max_instances == 0 || library.clips.is_empty() {
            return Err(Error::Limit {
                what: "an animator needs room for at least one instance and a library with at least one clip".into(),
            });
        }
        let max_joints = match desc.max_joints {
            Some(j) => j,
            None => desc.max_instances.checked_mul(largest).ok_or_else(|| Error::Limit {
                what: format!(
                    "{} instances of {largest} joints overflow a u32 joint count",
                    desc.max_instances
                ),
            })?,
        };
        let limits = device.limits();
        let layout = page_layout(&limits, desc, max_joints, largest)?;
        // A uniform: 32 KiB, within WebGPU's 64 KiB default, and no storage slot taken.
        let layer_def_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim layer definitions"),
            size: u64::from(MAX_LAYER_DEFS) * size_of::<GpuLayerDef>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let make_pipeline = |stage: Stage| -> StagePipeline {
            let entries: Vec<wgpu::BindGroupLayoutEntry> = stage
                .bindings()
                .iter()
                .map(|&(resource, access)| wgpu::BindGroupLayoutEntry {
                    binding: resource.binding(),
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: match access {
                            Access::Uniform => wgpu::BufferBindingType::Uniform,
                            Access::Read => wgpu::BufferBindingType::Storage { read_only: true },
                            Access::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                        },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                })
                .collect();
            let label = format!("wgpu-anim {}", stage.name());
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&label),
                entries: &entries,
            });
            let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(&label),
                source: wgpu::ShaderSource::Wgsl(stage_source(stage).into()),
            });
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(&label),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(stage.name()),
                compilation_options: Default::default(),
                cache: None,
            });
            StagePipeline {
                stage,
                layout,
                pipeline,
            }
        };
        let passes: Vec<StagePipeline> = Stage::COMPUTE.iter().map(|&stage| make_pipeline(stage)).collect();
        // The fused path needs its workgroup memory (within WebGPU's default) and skeletons small
        // enough for it; elsewhere only the staged path exists.
        let fused = (limits.max_compute_workgroup_storage_size >= FUSED_WORKGROUP_BYTES && largest <= MAX_FUSED_JOINTS)
            .then(|| make_pipeline(Stage::Fused));
        // Buffers the device cannot allocate are an error, not a panic of its error handler.
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let pages: Vec<Page> = layout
            .iter()
            .enumerate()
            .map(|(k, &(max_instances, max_joints))| {
                Page::new(
                    device,
                    k,
                    max_instances,
                    max_joints,
                    &gpu_library,
                    &layer_def_buffer,
                    &passes,
                    fused.as_ref(),
                )
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Limit {
                what: format!(
                    "{} pages for {} instances and {max_joints} joints could not be allocated: {e}",
                    pages.len(),
                    desc.max_instances
                ),
            });
        }
        Ok(Self {
            gpu_library,
            max_instances: desc.max_instances,
            max_workgroups: limits.max_compute_workgroups_per_dimension,
            instances: Vec::new(),
            page_of: Vec::new(),
            transitions: Vec::new(),
            held: Vec::new(),
            held_list: Vec::new(),
            seconds: 0.0,
            dirty: Vec::new(),
            dirty_mark: Vec::new(),
            clock_writes: Vec::new(),
            layer_defs: Vec::new(),
            layer_def_indices: std::collections::HashMap::new(),
            layer_defs_uploaded: 0,
            layer_def_buffer,
            pages,
            passes,
            fused,
            use_fused: false,
            uploaded: 0,
        })
    }

    /// Whether this animator can run the fused single-dispatch path: skeletons of at most
    /// [`MAX_FUSED_JOINTS`] joints (its bindings and workgroup memory fit WebGPU's defaults).
    #[must_use]
    pub fn fused_available(&self) -> bool {
        self.fused.is_some()
    }

    /// Chooses the fused path (one dispatch per frame, the blend list and the pose kept in
    /// workgroup memory; blend lists, model matrices and local poses other than snapshots not
    /// written) or the staged one (a dispatch per stage, every stage's buffer written). Errors
    /// when the fused path is not available here.
    pub fn set_fused(&mut self, fused: bool) -> Result<()> {
        if fused && self.fused.is_none() {
            return Err(Error::Limit {
                what: format!(
                    "the fused path needs {FUSED_WORKGROUP_BYTES} bytes of workgroup memory and skeletons of at \
                     most {MAX_FUSED_JOINTS} joints"
                ),
            });
        }
        self.use_fused = fused;
        Ok(())
    }

    /// Whether the fused path is in use.
    #[must_use]
    pub fn is_fused(&self) -> bool {
        self.use_fused
    }

    /// Target fields of `desc`: (clip, skeleton, joint count, tree offset, tree nodes).
    fn target(&self, index: usize, desc: &InstanceDesc) -> Result<(u32, u32, u32, u32, u32)> {
        let err = |what: String| Error::Instance { instance: index, what };
        if let Some(tree) = desc.tree {
            let t = self
                .gpu_library
                .library()
                .blend
                .trees
                .get(tree.0 as usize)
                .ok_or_else(|| {
                    err(format!(
                        "blend tree {} does not exist (the library has {})",
                        tree.0,
                        self.gpu_library.library().blend.trees.len()
                    ))
                })?;
            let joints = self
                .library()
                .gpu_skeletons
                .get(t.skeleton as usize)
                .map_or(0, |s| s.joint_count);
            return Ok((0, t.skeleton, joints, t.node_offset, t.node_count));
        }
        let clip = self
            .gpu_library
            .library()
            .clips
            .get(desc.clip.0 as usize)
            .ok_or_else(|| {
                err(format!(
                    "clip {} does not exist (the library has {})",
                    desc.clip.0,
                    self.gpu_library.library().clips.len()
                ))
            })?;
        Ok((desc.clip.0, clip.skeleton, clip.joint_count, 0, 0))
    }

    fn to_gpu(&self, index: usize, desc: &InstanceDesc, joint_offset: u32) -> Result<(GpuInstance, GpuClock)> {
        let err = |what: String| Error::Instance { instance: index, what };
        let (clip, skeleton, joint_count, tree_offset, tree_nodes) = self.target(index, desc)?;
        if !desc.time.is_finite() || !desc.rate.is_finite() {
            return Err(err(format!("time {} and rate {} must be finite", desc.time, desc.rate)));
        }
        check_params(index, &desc.params)?;
        let w = &desc.world;
        if !w.is_finite() || w.row(3) != glam::Vec4::W {
            return Err(err("world matrix must be finite and affine (last row 0 0 0 1)".into()));
        }
        let (loop_mode, loop_count) = match desc.loop_mode {
            LoopMode::Once => (LOOP_ONCE, 1),
            LoopMode::Repeat(0) => return Err(err("LoopMode::Repeat needs at least one loop".into())),
            LoopMode::Repeat(n) => (LOOP_REPEAT, n),
            LoopMode::Forever => (LOOP_FOREVER, 0),
        };
        let inst = GpuInstance {
            world: Affine::from_mat4(w),
            clip,
            skeleton,
            joint_offset,
            joint_count,
            rate: desc.rate,
            loop_mode,
            loop_count,
            tint: u32::from_le_bytes(desc.tint),
            params: Vec4::from(desc.params),
            tree_offset,
            tree_nodes,
            seq: 0,
            start_time: desc.time,
            source_clip: 0,
            source_tree_offset: 0,
            source_tree_nodes: 0,
            flags: source_kind::NONE,
            source_rate: 0.0,
            source_loop_mode: LOOP_ONCE,
            source_loop_count: 1,
            transition_duration: 0.0,
            layers: [GpuLayer::default(); MAX_LAYERS as usize],
            layer_seq: 0,
            _pad0: 0,
            _pad1: [0; 3],
            _pad2: [0; 8],
        };
        let duration = if tree_nodes == 0 {
            self.gpu_library.library().clips[clip as usize].duration
        } else {
            1.0
        };
        let ct = crate::cpu::advance_clip_time(desc.time, 0.0, loop_mode, loop_count, duration, 0.0);
        let clock = GpuClock {
            time: ct.time,
            ..Default::default()
        };
        Ok((inst, clock))
    }

    /// Applies `edit` to instance `index` and to the state held back for it, if any.
    fn edit_both(&mut self, index: usize, edit: impl Fn(&mut GpuInstance)) {
        edit(&mut self.instances[index]);
        if let Some(h) = &mut self.held[index] {
            edit(&mut h.inst);
        }
        self.mark_dirty(index);
    }

    /// Applies `edit` to the state held back for instance `index`, or else to the instance.
    fn edit_next(&mut self, index: usize, edit: impl Fn(&mut GpuInstance)) {
        match &mut self.held[index] {
            Some(h) => edit(&mut h.inst),
            None => edit(&mut self.instances[index]),
        }
        self.mark_dirty(index);
    }

    fn mark_dirty(&mut self, i: usize) {
        if !self.dirty_mark[i] {
            self.dirty_mark[i] = true;
            self.dirty.push(i);
        }
    }

    /// Adds an instance and returns its index. Its data reaches the GPU at the next
    /// [`Animator::prepare`].
    ///
    /// Errors (nothing is added): the clip does not exist, time or rate not finite, a world
    /// matrix that is not affine, `Repeat(0)`, or the capacity in instances or joints is full.
    pub fn add_instance(&mut self, desc: &InstanceDesc) -> Result<usize> {
        let index = self.instances.len();
        if index as u32 >= self.max_instances {
            return Err(Error::Limit {
                what: format!("the animator holds at most {} instances", self.max_instances),
            });
        }
        // Pages fill in order, each to its instance capacity: instance `index` belongs to the
        // first page whose capacity, added to the pages before it, exceeds `index`.
        let mut page = self.page_of.last().map_or(0, |&p| p as usize);
        if self.pages[page].len as u32 >= self.pages[page].max_instances {
            page += 1;
        }
        let (_, _, joint_count, _, _) = self.target(index, desc)?;
        let p = &self.pages[page];
        if p.joints_used + joint_count > p.max_joints {
            return Err(Error::Limit {
                what: format!(
                    "instance {index} needs {joint_count} joints but only {} of {} are free in its page ({page})",
                    p.max_joints - p.joints_used,
                    p.max_joints
                ),
            });
        }
        let (inst, clock) = self.to_gpu(index, desc, self.pages[page].joints_used)?;
        let p = &mut self.pages[page];
        if p.len == 0 {
            p.first = index;
        }
        p.len += 1;
        p.joints_used += inst.joint_count;
        self.page_of.push(page as u32);
        self.dirty_mark.push(false);
        self.instances.push(inst);
        self.transitions.push(TransitionTrack::default());
        self.held.push(None);
        self.clock_writes.push((index, clock));
        self.mark_dirty(index);
        Ok(index)
    }

    /// Replaces everything about instance `index` (its skeleton must stay the same, so its place
    /// in the pose buffers stays); what it plays restarts at `desc.time` with no transition.
    pub fn set_instance(&mut self, index: usize, desc: &InstanceDesc) -> Result<()> {
        let old = *self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: format!("does not exist ({} instances)", self.instances.len()),
        })?;
        let (mut inst, _) = self.to_gpu(index, desc, old.joint_offset)?;
        if inst.skeleton != old.skeleton {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "the new state animates skeleton {}, but the instance has skeleton {}",
                    inst.skeleton, old.skeleton
                ),
            });
        }
        inst.seq = old.seq.wrapping_add(1);
        // Layer seqs only grow: the GPU restarts a layer whose seq is newer than its clock's.
        inst.layer_seq = old.layer_seq;
        self.held[index] = None;
        self.instances[index] = inst;
        self.transitions[index] = TransitionTrack::default();
        self.mark_dirty(index);
        Ok(())
    }

    /// Starts playing `desc`'s clip or blend tree (with its rate, loop mode and, for a tree, its
    /// parameters) from `desc.time`, cross-fading from what the instance shows over `transition`
    /// (or cutting with `None`). World, tint, layers and the skeleton are kept.
    ///
    /// A cross-fade that starts while another runs blends from the pose shown at that moment, so
    /// nothing pops: the next frame still shows the running cross-fade and keeps its pose as a
    /// snapshot, and the new cross-fade starts the frame after ([`Animator::instance`] shows the
    /// running state until then; parameters, rate, world and layers set meanwhile go to the new
    /// state). This way no frame needs the local pose in memory except the one that keeps it.
    pub fn play(&mut self, index: usize, desc: &InstanceDesc, transition: Option<Transition>) -> Result<()> {
        let old = *self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: format!("does not exist ({} instances)", self.instances.len()),
        })?;
        let (new, _) = self.to_gpu(index, desc, old.joint_offset)?;
        if new.skeleton != old.skeleton {
            return Err(Error::Instance {
                instance: index,
                what: format!(
                    "the new state animates skeleton {}, but the instance has skeleton {}",
                    new.skeleton, old.skeleton
                ),
            });
        }
        if let Some(t) = transition {
            if !t.duration.is_finite() || t.duration < 0.0 {
                return Err(Error::Instance {
                    instance: index,
                    what: format!("transition duration {} must be finite and not negative", t.duration),
                });
            }
        }
        let mut inst = old;
        inst.flags &= !KEEP_POSE;
        inst.clip = new.clip;
        inst.tree_offset = new.tree_offset;
        inst.tree_nodes = new.tree_nodes;
        inst.params = new.params;
        inst.rate = new.rate;
        inst.loop_mode = new.loop_mode;
        inst.loop_count = new.loop_count;
        inst.start_time = new.start_time;
        inst.seq = old.seq.wrapping_add(1);
        let track = self.transitions[index];
        let running = old.source_kind() != source_kind::NONE
            && (self.held[index].is_some() || self.seconds - track.started_at < f64::from(track.duration));
        inst.flags &= !TRANSITION_BITS;
        match transition {
            Some(t) if t.duration > 0.0 && running => {
                // Held back a frame (see above); `old` keeps its pose meanwhile.
                inst.transition_duration = t.duration;
                inst.flags |= source_kind::SNAPSHOT
                    | if t.curve == Curve::Smooth { TRANSITION_SMOOTH } else { 0 }
                    | if t.frozen { TRANSITION_FROZEN } else { 0 };
                if self.held[index].is_none() {
                    self.held_list.push(index);
                }
                let kept = self.held[index].is_some_and(|h| h.kept);
                self.held[index] = Some(HeldPlay {
                    inst,
                    duration: t.duration,
                    kept,
                });
                self.instances[index].flags |= KEEP_POSE;
                self.mark_dirty(index);
                return Ok(());
            }
            Some(t) if t.duration > 0.0 => {
                let kind = if old.tree_nodes > 0 {
                    source_kind::TREE
                } else {
                    source_kind::CLIP
                };
                inst.source_clip = old.clip;
                inst.source_tree_offset = old.tree_offset;
                inst.source_tree_nodes = old.tree_nodes;
                inst.source_rate = old.rate;
                inst.source_loop_mode = old.loop_mode;
                inst.source_loop_count = old.loop_count;
                inst.transition_duration = t.duration;
                inst.flags |= kind
                    | if t.curve == Curve::Smooth { TRANSITION_SMOOTH } else { 0 }
                    | if t.frozen { TRANSITION_FROZEN } else { 0 };
                self.transitions[index] = TransitionTrack {
                    started_at: self.seconds,
                    duration: t.duration,
                };
            }
            _ => {
                inst.transition_duration = 0.0;
                self.transitions[index] = TransitionTrack::default();
            }
        }
        self.held[index] = None;
        self.instances[index] = inst;
        self.mark_dirty(index);
        Ok(())
    }

    /// Sets layer `slot` (0..3) of instance `index`; layers apply in slot order on top of the base
    /// state. `None` switches the layer off. The layer (re)starts at `layer.start` when its state
    /// or mode changes, or when `restart` is true.
    ///
    /// Errors: no such instance or slot, a clip, tree or mask that does not exist or belongs to
    /// another skeleton, a weight, start or rate that is not finite, a time parameter above 3.
    pub fn set_layer(&mut self, index: usize, slot: usize, layer: Option<&Layer>, restart: bool) -> Result<()> {
        let err = |what: String| Error::Instance { instance: index, what };
        let inst = *self.instances.get(index).ok_or_else(|| err("does not exist".into()))?;
        if slot >= MAX_LAYERS as usize {
            return Err(err(format!(
                "layer slot {slot} does not exist (there are {MAX_LAYERS})"
            )));
        }
        let Some(layer) = layer else {
            self.edit_both(index, |inst| inst.set_layer_flags(slot, None));
            return Ok(());
        };
        if !layer.weight.is_finite() || !layer.start.is_finite() || !layer.rate.is_finite() {
            return Err(err(format!(
                "layer {slot}: weight {}, start {} and rate {} must be finite",
                layer.weight, layer.start, layer.rate
            )));
        }
        if layer.clip.is_none() && layer.tree.is_none() {
            return Err(err(format!("layer {slot} plays neither a clip nor a blend tree")));
        }
        let desc = InstanceDesc {
            clip: layer.clip.unwrap_or(ClipId(0)),
            tree: layer.tree,
            ..InstanceDesc::new(ClipId(0))
        };
        let (clip, skeleton, _, tree_offset, tree_nodes) = self.target(index, &desc)?;
        if skeleton != inst.skeleton {
            return Err(err(format!(
                "layer {slot} animates skeleton {skeleton}, but the instance has skeleton {}",
                inst.skeleton
            )));
        }
        let mask = match layer.mask {
            None => NO_MASK,
            Some(m) => {
                let info = self
                    .library()
                    .masks
                    .get(m.0 as usize)
                    .ok_or_else(|| err(format!("mask {} does not exist", m.0)))?;
                if info.skeleton != inst.skeleton {
                    return Err(err(format!(
                        "mask {} was built for skeleton {}, not {}",
                        m.0, info.skeleton, inst.skeleton
                    )));
                }
                info.offset
            }
        };
        let time_parameter = match layer.time_parameter {
            None => NO_TIME_PARAMETER,
            Some(p) if p < 4 => p,
            Some(p) => return Err(err(format!("layer {slot}: time parameter {p} does not exist (0..4)"))),
        };
        let def = GpuLayerDef {
            mode: match layer.mode {
                LayerMode::Override => layer_mode::OVERRIDE,
                LayerMode::AdditiveLocal => layer_mode::ADDITIVE_LOCAL,
                LayerMode::AdditiveMesh => layer_mode::ADDITIVE_MESH,
            },
            mask,
            clip,
            tree_offset,
            tree_nodes,
            time_parameter,
            loop_mode: if layer.once { LOOP_ONCE } else { LOOP_FOREVER },
            _pad: 0,
        };
        let def_index = self
            .layer_def_index(def)
            .map_err(|what| err(format!("layer {slot}: {what}")))?;
        let changed = inst.flags & (LAYER_ON << slot) == 0 || {
            let old = &self.layer_defs[inst.layers[slot].def as usize];
            (old.mode, old.clip, old.tree_offset, old.tree_nodes)
                != (def.mode, def.clip, def.tree_offset, def.tree_nodes)
        };
        let (weight, rate, start_time) = (layer.weight.clamp(0.0, 1.0), layer.rate, layer.start);
        self.edit_both(index, |inst| {
            let seq = if restart || changed {
                inst.layer_seq = inst.layer_seq.wrapping_add(1);
                inst.layer_seq
            } else {
                inst.layers[slot].seq
            };
            inst.layers[slot] = GpuLayer {
                def: def_index,
                weight,
                rate,
                start_time,
                seq,
            };
            inst.set_layer_flags(slot, Some(&def));
        });
        Ok(())
    }

    /// The index of layer definition `def`, added if it is new (it reaches the GPU at the next
    /// [`Animator::prepare`]). Errors when [`MAX_LAYER_DEFS`] are in use.
    fn layer_def_index(&mut self, def: GpuLayerDef) -> std::result::Result<u32, String> {
        if let Some(&k) = self.layer_def_indices.get(&def) {
            return Ok(k);
        }
        if self.layer_defs.len() as u32 >= MAX_LAYER_DEFS {
            return Err(format!(
                "the animator already has {MAX_LAYER_DEFS} layer definitions (distinct modes, clips or trees, \
                 masks, loop modes and time parameters), the most it holds"
            ));
        }
        let k = self.layer_defs.len() as u32;
        self.layer_defs.push(def);
        self.layer_def_indices.insert(def, k);
        Ok(k)
    }

    /// The layer definitions instances' layers index (`GpuLayer::def`), in the order of the
    /// layer definition buffer.
    #[must_use]
    pub fn layer_defs(&self) -> &[GpuLayerDef] {
        &self.layer_defs
    }

    /// Sets the weight of layer `slot` of instance `index` (clamped to [0, 1]).
    pub fn set_layer_weight(&mut self, index: usize, slot: usize, weight: f32) -> Result<()> {
        if index >= self.instances.len() || slot >= MAX_LAYERS as usize || !weight.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("layer {slot} does not exist, or weight {weight} is not finite"),
            });
        }
        self.edit_both(index, |inst| inst.layers[slot].weight = weight.clamp(0.0, 1.0));
        Ok(())
    }

    /// Sets instance `index`'s blend parameters (used by blend trees, target and source).
    pub fn set_parameters(&mut self, index: usize, params: [f32; 4]) -> Result<()> {
        if index >= self.instances.len() {
            return Err(Error::Instance {
                instance: index,
                what: "does not exist".into(),
            });
        }
        check_params(index, &params)?;
        self.edit_next(index, |inst| inst.params = Vec4::from(params));
        Ok(())
    }

    /// Moves instance `index`: sets its `world_from_model` matrix without touching its clock.
    pub fn set_world(&mut self, index: usize, world: Mat4) -> Result<()> {
        let inst = self.instances.get(index).ok_or_else(|| Error::Instance {
            instance: index,
            what: "does not exist".into(),
        })?;
        if !world.is_finite() || world.row(3) != glam::Vec4::W {
            return Err(Error::Instance {
                instance: index,
                what: "world matrix must be finite and affine".into(),
            });
        }
        let _ = inst;
        let world = Affine::from_mat4(&world);
        self.edit_both(index, |inst| inst.world = world);
        Ok(())
    }

    /// Sets instance `index`'s playback rate without touching its clock.
    pub fn set_rate(&mut self, index: usize, rate: f32) -> Result<()> {
        if index >= self.instances.len() || !rate.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("does not exist, or rate {rate} is not finite"),
            });
        }
        self.edit_next(index, |inst| inst.rate = rate);
        Ok(())
    }

    /// Seeks instance `index` to local time `time` (a phase for a blend tree); ends any transition.
    /// Its layers restart, each at its start.
    pub fn set_time(&mut self, index: usize, time: f32) -> Result<()> {
        if index >= self.instances.len() {
            return Err(Error::Instance {
                instance: index,
                what: "does not exist".into(),
            });
        }
        if !time.is_finite() {
            return Err(Error::Instance {
                instance: index,
                what: format!("time {time} is not finite"),
            });
        }
        // A held-back transition's state starts now, with no transition.
        if let Some(h) = self.held[index].take() {
            self.instances[index] = h.inst;
            self.mark_dirty(index);
        }
        let inst = self.instances[index];
        let duration = if inst.tree_nodes == 0 {
            self.gpu_library.library().clips[inst.clip as usize].duration
        } else {
            1.0
        };
        let ct = crate::cpu::advance_clip_time(time, 0.0, inst.loop_mode, inst.loop_count, duration, 0.0);
        self.clock_writes.push((
            index,
            GpuClock {
                time: ct.time,
                seq: inst.seq,
                source_time: 0.0,
                transition_time: 0.0,
                layer_time: inst.layers.map(|l| l.start_time),
                layer_seq: inst.layer_seq,
            },
        ));
        if inst.flags & (TRANSITION_BITS | KEEP_POSE) != 0 {
            self.instances[index].flags &= !(TRANSITION_BITS | KEEP_POSE);
            self.transitions[index] = TransitionTrack::default();
            self.mark_dirty(index);
        }
        Ok(())
    }

    /// Removes every instance from `len` on (the others keep their indices and state).
    pub fn truncate(&mut self, len: usize) {
        if len < self.instances.len() {
            for p in &mut self.pages {
                if p.first + p.len > len {
                    let keep = len.saturating_sub(p.first).min(p.len);
                    p.joints_used = if keep == 0 {
                        0
                    } else {
                        self.instances[p.first + keep].joint_offset
                    };
                    p.len = keep;
                }
            }
            self.instances.truncate(len);
            self.page_of.truncate(len);
            self.transitions.truncate(len);
            self.held.truncate(len);
            self.held_list.retain(|&i| i < len);
            self.clock_writes.retain(|(i, _)| *i < len);
            self.dirty.retain(|&i| i < len);
            self.dirty_mark.truncate(len);
        }
    }

    /// Number of instances.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.instances.len()
    }

    /// Instance `index`'s parameters as the GPU holds them.
    #[must_use]
    pub fn instance(&self, index: usize) -> Option<&GpuInstance> {
        self.instances.get(index)
    }

    /// All instances' parameters as the GPU holds them.
    #[must_use]
    pub fn instances(&self) -> &[GpuInstance] {
        &self.instances
    }

    /// The library the animator was built with.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        self.gpu_library.library()
    }

    /// The library on the GPU (to share with another animator, [`Animator::with_library`]).
    #[must_use]
    pub fn gpu_library(&self) -> &Arc<GpuLibrary> {
        &self.gpu_library
    }

    /// Joints in use in the first page (over all instances when there is one page).
    #[must_use]
    pub fn joint_count(&self) -> u32 {
        self.pages[0].joints_used
    }

    /// Pages holding at least one instance (pages fill in order: pages `0..pages_in_use()`).
    #[must_use]
    pub fn pages_in_use(&self) -> usize {
        self.pages.iter().take_while(|p| p.len > 0).count()
    }

    /// Number of pages (see [`AnimatorDesc`]).
    #[must_use]
    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// The page of instance `index` and its index within that page (its instance in the page's
    /// instance buffer, its `joint_offset` into the page's palette buffer).
    #[must_use]
    pub fn page_of(&self, index: usize) -> Option<(usize, usize)> {
        let p = *self.page_of.get(index)? as usize;
        Some((p, index - self.pages[p].first))
    }

    /// The instances of page `page` (global indices `page_range(page)`).
    #[must_use]
    pub fn page_instances(&self, page: usize) -> &[GpuInstance] {
        let r = self.page_range(page);
        &self.instances[r]
    }

    /// Global indices of the instances in page `page` (empty past the last page in use).
    #[must_use]
    pub fn page_range(&self, page: usize) -> std::ops::Range<usize> {
        self.pages.get(page).map_or(0..0, |p| p.first..p.first + p.len)
    }

    /// Instance capacity of page `page`. Pages fill in order, so page `k` holds the instances
    /// from the sum of the capacities of the pages before it on.
    #[must_use]
    pub fn page_capacity(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.max_instances)
    }

    /// Joint capacity of page `page`: its local pose buffer holds this many current poses, then
    /// as many snapshots, then as many mesh-space deltas.
    #[must_use]
    pub fn page_max_joints(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.max_joints)
    }

    /// Joints in use in page `page`.
    #[must_use]
    pub fn page_joint_count(&self, page: usize) -> u32 {
        self.pages.get(page).map_or(0, |p| p.joints_used)
    }

    /// Bytes the last [`Animator::prepare`] wrote to the GPU (frame uniforms, instances, clocks,
    /// layer definitions).
    #[must_use]
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded
    }

    /// Uploads this frame's `dt` and whatever instance data and layer definitions changed since
    /// the last call. An ordinary frame, with no instance changed, writes 16 bytes.
    pub fn prepare(&mut self, queue: &wgpu::Queue, dt: f32) {
        let dt = if dt.is_finite() { dt } else { 0.0 };
        // Held-back transitions whose pose a frame has kept start now; the others keep it in this
        // frame.
        for index in std::mem::take(&mut self.held_list) {
            let Some(h) = &mut self.held[index] else { continue };
            if h.kept {
                self.instances[index] = h.inst;
                self.transitions[index] = TransitionTrack {
                    started_at: self.seconds,
                    duration: h.duration,
                };
                self.held[index] = None;
                self.mark_dirty(index);
            } else {
                h.kept = true;
                self.held_list.push(index);
            }
        }
        self.seconds += f64::from(dt);
        let mut uploaded = 0u64;
        let mut write = |buffer: &wgpu::Buffer, offset: u64, bytes: &[u8]| {
            queue.write_buffer(buffer, offset, bytes);
            uploaded += bytes.len() as u64;
        };
        for p in self.pages.iter().filter(|p| p.len > 0) {
            let frame = GpuFrame {
                dt,
                instance_count: p.len as u32,
                snapshot_offset: p.max_joints,
                _pad: 0,
            };
            write(&p.frame_buffer, 0, bytemuck::bytes_of(&frame));
        }
        if self.layer_defs_uploaded < self.layer_defs.len() {
            write(
                &self.layer_def_buffer,
                (self.layer_defs_uploaded * size_of::<GpuLayerDef>()) as u64,
                bytemuck::cast_slice(&self.layer_defs[self.layer_defs_uploaded..]),
            );
            self.layer_defs_uploaded = self.layer_defs.len();
        }
        // Changed instances, in runs of consecutive indices within a page: an edit at instance 3
        // and one at 9,000 upload two instances, not everything between them.
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        for run in runs(&dirty, &self.page_of) {
            let p = &self.pages[self.page_of[run.start] as usize];
            write(
                &p.instance_buffer,
                ((run.start - p.first) * size_of::<GpuInstance>()) as u64,
                bytemuck::cast_slice(&self.instances[run.clone()]),
            );
        }
        for &i in &dirty {
            self.dirty_mark[i] = false;
        }
        dirty.clear();
        self.dirty = dirty;
        // Clock writes, coalesced the same way (a later write to an instance wins).
        let mut writes = std::mem::take(&mut self.clock_writes);
        writes.reverse();
        writes.sort_by_key(|(i, _)| *i);
        writes.dedup_by_key(|(i, _)| *i);
        let indices: Vec<usize> = writes.iter().map(|(i, _)| *i).collect();
        let mut k = 0;
        for run in runs(&indices, &self.page_of) {
            let p = &self.pages[self.page_of[run.start] as usize];
            let clocks: Vec<GpuClock> = writes[k..k + run.len()].iter().map(|(_, c)| *c).collect();
            write(
                &p.clock_buffer,
                ((run.start - p.first) * size_of::<GpuClock>()) as u64,
                bytemuck::cast_slice(&clocks),
            );
            k += run.len();
        }
        self.uploaded = uploaded;
    }

    /// Dispatches per frame and page: one per stage (one on the fused path), whatever the number
    /// of instances.
    #[must_use]
    pub fn dispatches_per_page(&self) -> u32 {
        if self.use_fused { 1 } else { self.passes.len() as u32 }
    }

    /// Dispatches per frame: [`Animator::dispatches_per_page`] for every page in use.
    #[must_use]
    pub fn dispatches_per_frame(&self) -> u32 {
        self.dispatches_per_page() * self.pages.iter().filter(|p| p.len > 0).count() as u32
    }

    /// Records the frame's passes — clock, sample, local_to_model, palette — into `encoder`.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_timed(encoder, None);
    }

    /// As [`Animator::encode`], writing timestamps around each pass (pass `k` is stage `k` of
    /// [`Stage::COMPUTE`]) when a timer with at least four passes is given.
    pub fn encode_timed(&self, encoder: &mut wgpu::CommandEncoder, timer: Option<&PassTimer>) {
        let fused = self.fused.as_ref().filter(|_| self.use_fused);
        let passes: &[StagePipeline] = match fused {
            Some(f) => std::slice::from_ref(f),
            None => &self.passes,
        };
        for (k, pass) in passes.iter().enumerate() {
            // One pass per stage, each page a dispatch in it; timestamps around the pass.
            let pages: Vec<&Page> = self.pages.iter().filter(|p| p.len > 0).collect();
            if pages.is_empty() {
                return;
            }
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(pass.stage.name()),
                timestamp_writes: timer.and_then(|t| t.compute_writes(k as u32)),
            });
            cpass.set_pipeline(&pass.pipeline);
            for page in pages {
                let n = page.len as u32;
                let groups = match pass.stage {
                    // One workgroup per instance, threads over joints.
                    Stage::Sample | Stage::Palette | Stage::Fused => n,
                    // One thread per instance.
                    _ => n.div_ceil(WORKGROUP_SIZE),
                };
                let bind_group = match fused {
                    Some(_) => page.fused_bind_group.as_ref().expect("made with the fused pipeline"),
                    None => &page.bind_groups[k],
                };
                let (x, y) = split_dispatch(groups, self.max_workgroups);
                cpass.set_bind_group(0, bind_group, &[]);
                cpass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// The palette buffer of the first page (every instance's, when the animator has one page):
    /// 3×4 skinning matrices (`Affine`, 48 bytes), instance `i`'s joints at
    /// `instances()[i].joint_offset`. Usage: STORAGE | VERTEX | COPY_SRC | COPY_DST. With more
    /// pages, see [`Animator::page_palette_buffer`].
    #[must_use]
    pub fn palette_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].palette_buffer
    }
    /// The palette buffer of page `page` (its instances' `joint_offset`s index it).
    #[must_use]
    pub fn page_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| &p.palette_buffer)
    }
    /// The instance buffer of the first page (`GpuInstance` per instance).
    #[must_use]
    pub fn instance_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].instance_buffer
    }
    /// The instance buffer of page `page` (instance `page_range(page).start + k` at `k`).
    #[must_use]
    pub fn page_instance_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| &p.instance_buffer)
    }
    /// The clock buffer of the first page (`GpuClock` per instance), written by `clock`.
    #[must_use]
    pub fn clock_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].clock_buffer
    }
    /// Blend lists of the first page (`BlendList` per instance), written by `clock`, read by
    /// `sample` (the fused path keeps them in workgroup memory and does not write them).
    #[must_use]
    pub fn blend_list_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].blend_list_buffer
    }
    /// The layer definition uniform ([`Animator::layer_defs`], room for [`MAX_LAYER_DEFS`]).
    #[must_use]
    pub fn layer_def_buffer(&self) -> &wgpu::Buffer {
        &self.layer_def_buffer
    }
    /// Joint capacity of the first page: its local pose buffer holds this many current poses,
    /// then as many snapshots.
    #[must_use]
    pub fn max_joints(&self) -> u32 {
        self.pages[0].max_joints
    }
    /// Local poses of the first page (`LocalPose` per joint), written by `sample`; snapshots
    /// from `max_joints()` on (the fused path writes only snapshots).
    #[must_use]
    pub fn local_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].local_buffer
    }
    /// Model-space matrices of the first page (`Affine` per joint), written by `local_to_model`
    /// (not by the fused path).
    #[must_use]
    pub fn model_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].model_buffer
    }

    /// Reads back every stage's output for the first page's instances (all of them with one
    /// page; for tests and tools; waits for the GPU). On the fused path only the clocks and the
    /// palettes are this frame's.
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<GpuClock>, Pose)> {
        self.read_back_page(device, queue, 0)
    }

    /// As [`Animator::read_back`], for page `page`.
    pub fn read_back_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<(Vec<GpuClock>, Pose)> {
        let p = self.page(page)?;
        let (n, j) = (p.len as u64, u64::from(p.joints_used));
        Ok((
            read_buffer(device, queue, &p.clock_buffer, 0, n)?,
            Pose {
                local: read_buffer(device, queue, &p.local_buffer, 0, j)?,
                model: read_buffer(device, queue, &p.model_buffer, 0, j)?,
                palette: read_buffer(device, queue, &p.palette_buffer, 0, j)?,
            },
        ))
    }

    fn page(&self, page: usize) -> Result<&Page> {
        self.pages.get(page).ok_or_else(|| Error::Limit {
            what: format!("page {page} does not exist ({} pages)", self.pages.len()),
        })
    }

    /// Reads back the blend lists of page `page`, as the `clock` stage last wrote them.
    pub fn read_blend_lists_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<Vec<BlendList>> {
        let p = self.page(page)?;
        read_buffer(device, queue, &p.blend_list_buffer, 0, p.len as u64)
    }

    /// Reads back the blend lists of the first page.
    pub fn read_blend_lists(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<BlendList>> {
        self.read_blend_lists_page(device, queue, 0)
    }

    /// Reads back region `region` of page `page`'s local pose buffer: 0 the current poses, 1 the
    /// snapshots, 2 the mesh-space additive deltas (`LocalPose::rotation`; after `local_to_model`
    /// the other fields hold its scratch).
    pub fn read_local_region_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
        region: u32,
    ) -> Result<Vec<LocalPose>> {
        let p = self.page(page)?;
        read_buffer(
            device,
            queue,
            &p.local_buffer,
            u64::from(region.min(2)) * u64::from(p.max_joints),
            u64::from(p.joints_used),
        )
    }

    /// [`Animator::read_local_region_page`] of the first page.
    pub fn read_local_region(&self, device: &wgpu::Device, queue: &wgpu::Queue, region: u32) -> Result<Vec<LocalPose>> {
        self.read_local_region_page(device, queue, 0, region)
    }

    /// Reads back the first page's snapshot poses (`LocalPose` per joint, same offsets as the
    /// current poses).
    pub fn read_snapshots(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<LocalPose>> {
        self.read_local_region_page(device, queue, 0, 1)
    }
}

/// Runs of consecutive indices of `sorted` (sorted, no repeats) that lie in one page.
fn runs(sorted: &[usize], page_of: &[u32]) -> Vec<std::ops::Range<usize>> {
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    for &i in sorted {
        match out.last_mut() {
            Some(r) if r.end == i && page_of[r.start] == page_of[i] => r.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

fn check_params(index: usize, params: &[f32; 4]) -> Result<()> {
    if let Some(k) = params.iter().position(|p| !p.is_finite()) {
        return Err(Error::Instance {
            instance: index,
            what: format!(
                "blend parameter {k} is {} (parameters must be finite; at most {MAX_BLEND_PARAMETERS})",
                params[k]
            ),
        });
    }
    Ok(())
}

/// Evaluates clips at given times on the GPU and reads back local poses, model matrices and
/// palettes, one [`Pose`] per request (for tools and conformance tests). Times are clamped to
/// each clip.
pub fn evaluate_poses(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &AnimationLibrary,
    requests: &[(ClipId, f32)],
) -> Result<Vec<Pose>> {
    if requests.is_empty() {
        return Ok(Vec::new());
    }
    let mut animator = Animator::new(
        device,
        library,
        &AnimatorDesc {
            max_instances: requests.len() as u32,
            ..AnimatorDesc::default()
        },
    )?;
    for &(clip, time) in requests {
        animator.add_instance(&InstanceDesc {
            time,
            rate: 0.0,
            loop_mode: LoopMode::Once,
            ..InstanceDesc::new(clip)
        })?;
    }
    animator.prepare(queue, 0.0);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("evaluate_poses"),
    });
    animator.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let mut poses = Vec::with_capacity(requests.len());
    for page in 0..animator.page_count() {
        if animator.page_range(page).is_empty() {
            break;
        }
        let (_, all) = animator.read_back_page(device, queue, page)?;
        poses.extend(animator.page_instances(page).iter().map(|inst| {
            let r = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
            Pose {
                local: all.local[r.clone()].to_vec(),
                model: all.model[r.clone()].to_vec(),
                palette: all.palette[r].to_vec(),
            }
        }));
    }
    Ok(poses)
}
