//! [`Animator`]: the frame executor — every page's buffers, the pipelines, the uploads and the
//! compute passes of a frame recorded into the caller's encoder — around a [`Controller`], every
//! instance's state on the CPU.

use super::controller::{Controller, FrameUpload, PageState};
use super::recovery::{Checkpoint, CheckpointCopy, CheckpointSource, Recovery};
use super::ring::{FrameReadback, Ring, RingCopy, RingLayout};
use super::{AnimatorDesc, GpuLibrary, InstanceDesc, LoopMode};
use super::{PassTimer, read_buffer, split_dispatch};
use crate::cpu::Pose;
use crate::error::{Error, Result};
use crate::layout::{
    BlendList, GpuClock, GpuEventLogHead, GpuEventRecord, GpuFrame, GpuInstance, GpuLayerDef, GpuOutput, LocalPose,
    MAX_FUSED_JOINTS, MAX_LAYER_DEFS, MAX_SOCKETS, WORKGROUP_SIZE,
};
use crate::library::{AnimationLibrary, ClipId};
use crate::math::Affine;
use crate::shaders::{Resource, Stage, library_defs, stage_source_with};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// One page's buffers and its bind group for each pass (what is in it: [`PageState`]).
struct Page {
    instance_buffer: wgpu::Buffer,
    clock_buffer: wgpu::Buffer,
    /// Root motion of each instance (`GpuOutput`), kept by the clock stage.
    output_buffer: wgpu::Buffer,
    blend_list_buffer: wgpu::Buffer,
    local_buffer: wgpu::Buffer,
    model_buffer: wgpu::Buffer,
    palette_buffer: wgpu::Buffer,
    /// Last frame's palettes, kept for motion vectors ([`Animator::keep_previous_palettes`]).
    previous_palette: Option<wgpu::Buffer>,
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
///
/// An animator is a [`Controller`] — every instance's state on the CPU, with no device; its
/// methods (`add_instance`, `play`, `set_layer`, ...) are the animator's through `Deref` — and
/// the frame executor: the pages' buffers, the pipelines, the uploads and the passes.
pub struct Animator {
    controller: Controller,
    gpu_library: Arc<GpuLibrary>,
    max_workgroups: u32,
    layer_def_buffer: wgpu::Buffer,
    /// Every page's frame uniform, page `k`'s at `k * frame_stride`: one write per frame.
    frame_buffer: wgpu::Buffer,
    frame_stride: u64,
    /// The bytes of `frame_buffer`, kept between frames so that a frame allocates nothing.
    frame_bytes: Vec<u8>,
    /// The event log every page's clock (or fused) pass appends to ([`Animator::watch_events`]).
    event_log: wgpu::Buffer,
    /// Records the event log holds; 0 when events are not watched.
    event_capacity: u32,
    pages: Vec<Page>,
    passes: Vec<StagePipeline>,
    fused: Option<StagePipeline>,
    use_fused: bool,
    uploaded: u64,
    /// Where this frame copies the palettes to the previous palettes, when they are kept.
    previous_copy: PreviousCopy,
    /// Whether a frame has been prepared since previous palettes began to be kept.
    previous_prepared: bool,
    /// Frames prepared.
    frames: u64,
    /// Times the passes were encoded since the last prepare.
    encodes: AtomicU32,
    /// What is kept to rebuild on a new device ([`Animator::set_recovery`]).
    recovery: Option<Recovery>,
    /// The copies this frame records for a checkpoint.
    checkpoint_copies: Vec<CheckpointCopy>,
    /// Watched sockets read back every frame ([`Animator::watch_sockets`]).
    ring: Option<Ring>,
}

/// When a frame copies each page's palettes into its previous palettes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PreviousCopy {
    /// Previous palettes are not kept.
    Off,
    /// Before the passes: the previous palettes are last frame's.
    Before,
    /// After the passes, on the first frame that keeps them: this frame's (no motion yet).
    After,
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
/// Bytes of one instance's socket matrices, after the joints' in the palette buffer (when the
/// library has sockets).
const SOCKET_BYTES: u64 = MAX_SOCKETS as u64 * size_of::<Affine>() as u64;

/// Bytes of a page's palette buffer: its joints' palettes, then, with sockets, every instance's
/// socket matrices.
fn palette_bytes(instances: u32, joints: u32, sockets: bool) -> u64 {
    let socket_bytes = if sockets {
        u64::from(instances) * SOCKET_BYTES
    } else {
        0
    };
    u64::from(joints) * size_of::<Affine>() as u64 + socket_bytes
}

/// The capacity `(instances, joints)` of each page for `desc` on a device with `limits`: as many
/// instances per page as fit one storage binding (or `desc.page_instances`), with joints for
/// that many of the largest skeleton, or `max_joints` split over the pages.
fn page_layout(
    limits: &wgpu::Limits,
    desc: &AnimatorDesc,
    max_joints: u32,
    largest: u32,
    sockets: bool,
) -> Result<Vec<(u32, u32)>> {
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
        if sockets {
            // The palettes and the socket matrices share a binding.
            let per_instance = u64::from(largest) * size_of::<Affine>() as u64 + SOCKET_BYTES;
            per_page = per_page.min((cap / per_instance).min(u64::from(u32::MAX)) as u32);
        }
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
        if palette_bytes(instances.max(1), joints, sockets) > cap {
            return Err(Error::Limit {
                what: format!(
                    "page {k}'s palettes and socket matrices need {} bytes; the device allows {cap} per storage buffer",
                    palette_bytes(instances.max(1), joints, sockets)
                ),
            });
        }
        out.push((instances.max(1), joints));
        instances_left -= instances.min(instances_left);
        joints_left -= joints.min(joints_left);
    }
    Ok(out)
}

/// Whether pages of capacities `layout` fit a device with `limits` (each buffer within one
/// storage binding).
fn check_pages(limits: &wgpu::Limits, layout: &[(u32, u32)], sockets: bool) -> std::result::Result<(), String> {
    let cap = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
    for (k, &(instances, joints)) in layout.iter().enumerate() {
        let largest = (u64::from(instances) * INSTANCE_BYTES)
            .max(u64::from(joints) * LOCAL_JOINT_BYTES)
            .max(palette_bytes(instances, joints, sockets));
        if largest > cap {
            return Err(format!(
                "page {k} needs a buffer of {largest} bytes; the device allows {cap} per storage buffer"
            ));
        }
    }
    Ok(())
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
        frame: wgpu::BufferBinding<'_>,
        event_log: &wgpu::Buffer,
        passes: &[StagePipeline],
        fused: Option<&StagePipeline>,
    ) -> Self {
        let label = |what: &str| format!("wgpu-anim page {k} {what}");
        let instances = u64::from(max_instances);
        let joints = u64::from(max_joints);
        let instance_buffer = storage(device, &label("instances"), instances * size_of::<GpuInstance>() as u64);
        let clock_buffer = storage(device, &label("clocks"), instances * size_of::<GpuClock>() as u64);
        let output_buffer = storage(device, &label("outputs"), instances * size_of::<GpuOutput>() as u64);
        let blend_list_buffer = storage(device, &label("blend lists"), instances * size_of::<BlendList>() as u64);
        // Current local poses, then one snapshot per joint (the source of interrupted transitions),
        // then one mesh-space additive delta per joint (scratch between `sample` and `local_to_model`).
        let local_buffer = storage(device, &label("local poses"), joints * LOCAL_JOINT_BYTES);
        let model_buffer = storage(device, &label("model poses"), joints * size_of::<Affine>() as u64);
        let palette_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(&label("palettes")),
            size: palette_bytes(max_instances, max_joints, gpu_library.library().has_sockets()).max(16),
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::VERTEX,
            mapped_at_creation: false,
        });
        let mut page = Self {
            instance_buffer,
            clock_buffer,
            output_buffer,
            blend_list_buffer,
            local_buffer,
            model_buffer,
            palette_buffer,
            previous_palette: None,
            bind_groups: Vec::new(),
            fused_bind_group: None,
        };
        page.bind(
            device,
            k,
            gpu_library,
            layer_def_buffer,
            frame,
            event_log,
            passes,
            fused,
        );
        page
    }

    /// (Re)makes the page's bind groups, one per pass.
    #[expect(clippy::too_many_arguments, reason = "the page's share of the animator")]
    fn bind(
        &mut self,
        device: &wgpu::Device,
        k: usize,
        gpu_library: &GpuLibrary,
        layer_def_buffer: &wgpu::Buffer,
        frame: wgpu::BufferBinding<'_>,
        event_log: &wgpu::Buffer,
        passes: &[StagePipeline],
        fused: Option<&StagePipeline>,
    ) {
        let label = |what: &str| format!("wgpu-anim page {k} {what}");
        let binding_of = |resource: Resource| -> wgpu::BindingResource<'_> {
            let buffer = match resource {
                // This page's slot of the animator's frame buffer.
                Resource::Frame => return wgpu::BindingResource::Buffer(frame.clone()),
                Resource::Library => gpu_library.layout_buffer(),
                Resource::LayerDefs => layer_def_buffer,
                Resource::Heap => gpu_library.heap(),
                Resource::Instances => &self.instance_buffer,
                Resource::Clocks => &self.clock_buffer,
                Resource::BlendLists => &self.blend_list_buffer,
                Resource::LocalPoses => &self.local_buffer,
                Resource::ModelPoses => &self.model_buffer,
                Resource::Palettes => &self.palette_buffer,
                // Shared by every page: one log per frame.
                Resource::Events => event_log,
                Resource::Outputs => &self.output_buffer,
            };
            buffer.as_entire_binding()
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
                        resource: binding_of(resource),
                    })
                    .collect::<Vec<_>>(),
            })
        };
        let bind_groups = passes.iter().map(bind_group).collect();
        let fused_bind_group = fused.map(bind_group);
        self.bind_groups = bind_groups;
        self.fused_bind_group = fused_bind_group;
    }
}

/// The readback ring for `layout`; none when there is nothing to read.
fn make_ring(device: &wgpu::Device, layout: RingLayout) -> Result<Option<Ring>> {
    if layout.is_empty() {
        return Ok(None);
    }
    super::refusable(
        device,
        || "the readback ring".to_owned(),
        || Some(Ring::new(device, layout)),
    )
}

/// Merges element `element` of page `page` into `copies` as element `k` of its part of a slot.
fn push_copy(copies: &mut Vec<RingCopy>, page: usize, element: u64, k: usize) {
    match copies.last_mut() {
        Some(c) if c.page == page && c.element + c.count == element && c.dst + c.count == k as u64 => {
            c.count += 1;
        }
        _ => copies.push(RingCopy {
            page,
            element,
            dst: k as u64,
            count: 1,
        }),
    }
}

/// The event log buffer for `capacity` records: its head (`GpuEventLogHead`) then the records.
fn event_log_buffer(device: &wgpu::Device, capacity: u32) -> wgpu::Buffer {
    storage(
        device,
        "wgpu-anim event log",
        (size_of::<GpuEventLogHead>() + capacity.max(1) as usize * size_of::<GpuEventRecord>()) as u64,
    )
}

impl Animator {
    /// Uploads `library` and allocates buffers for `desc`'s capacity on `device`. To share one
    /// upload of a library between animators, use [`Animator::with_library`].
    ///
    /// Errors: a capacity of zero, or buffers larger than the device's
    /// `max_storage_buffer_binding_size` (the message says which and by how much); a stage's
    /// pipeline the device refuses ([`Error::Refused`], naming the stage).
    pub fn new(device: &wgpu::Device, library: &AnimationLibrary, desc: &AnimatorDesc) -> Result<Self> {
        Self::with_library(device, GpuLibrary::new(device, library)?, desc)
    }

    /// Allocates buffers for `desc`'s capacity on `device`, playing a library already on the GPU.
    ///
    /// Errors: as [`Animator::new`].
    pub fn with_library(device: &wgpu::Device, gpu_library: Arc<GpuLibrary>, desc: &AnimatorDesc) -> Result<Self> {
        let library = gpu_library.library();
        let largest = library.gpu_skeletons().iter().map(|s| s.joint_count).max().unwrap_or(0);
        if desc.max_instances == 0 || library.clips().is_empty() {
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
        let layout = page_layout(&device.limits(), desc, max_joints, largest, library.has_sockets())?;
        Self::with_pages(device, gpu_library, desc.max_instances, &layout)
    }

    /// Allocates pages of capacities `layout` (`(instances, joints)` each) for up to
    /// `max_instances` instances.
    fn with_pages(
        device: &wgpu::Device,
        gpu_library: Arc<GpuLibrary>,
        max_instances: u32,
        layout: &[(u32, u32)],
    ) -> Result<Self> {
        let limits = device.limits();
        let largest = gpu_library
            .library()
            .gpu_skeletons()
            .iter()
            .map(|s| s.joint_count)
            .max()
            .unwrap_or(0);
        // A uniform: 32 KiB, within WebGPU's 64 KiB default, and no storage slot taken.
        let layer_def_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim layer definitions"),
            size: u64::from(MAX_LAYER_DEFS) * size_of::<GpuLayerDef>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // A stage the device refuses (beyond its limits) is an error naming the stage.
        let make_pipeline = |stage: Stage| -> Result<StagePipeline> {
            super::refusable(
                device,
                || format!("the {} pipeline", stage.name()),
                || {
                    let entries = stage.layout_entries();
                    let label = format!("wgpu-anim {}", stage.name());
                    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                        label: Some(&label),
                        entries: &entries,
                    });
                    // The variant the library needs (shaders::library_defs).
                    let source = stage_source_with(stage, &library_defs(gpu_library.library()))
                        .unwrap_or_else(|e| panic!("the crate's shaders compose: {e}"));
                    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(&label),
                        source: wgpu::ShaderSource::Wgsl(source.into()),
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
                },
            )
        };
        let passes: Vec<StagePipeline> = Stage::COMPUTE
            .iter()
            .map(|&stage| make_pipeline(stage))
            .collect::<Result<_>>()?;
        // The fused path needs its workgroup memory (within WebGPU's default) and skeletons small
        // enough for it; elsewhere only the staged path exists.
        let fused = (limits.max_compute_workgroup_storage_size >= FUSED_WORKGROUP_BYTES && largest <= MAX_FUSED_JOINTS)
            .then(|| make_pipeline(Stage::Fused))
            .transpose()?;
        // Buffers the device cannot allocate are an error, not a panic of its error handler.
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        // One uniform buffer holds every page's frame, each in a slot aligned for binding at an
        // offset, so that a frame writes it once however many pages there are.
        let frame_size = size_of::<GpuFrame>() as u64;
        let frame_stride = frame_size.next_multiple_of(u64::from(limits.min_uniform_buffer_offset_alignment));
        let event_log = event_log_buffer(device, 0);
        let frame_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim frames"),
            size: frame_stride * layout.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
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
                    wgpu::BufferBinding {
                        buffer: &frame_buffer,
                        offset: k as u64 * frame_stride,
                        size: std::num::NonZeroU64::new(frame_size),
                    },
                    &event_log,
                    &passes,
                    fused.as_ref(),
                )
            })
            .collect();
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Limit {
                what: format!(
                    "{} pages for {max_instances} instances and {} joints could not be allocated: {e}",
                    pages.len(),
                    layout.iter().map(|&(_, j)| u64::from(j)).sum::<u64>()
                ),
            });
        }
        let controller = Controller::new(gpu_library.library_arc().clone(), max_instances, layout)?;
        Ok(Self {
            controller,
            gpu_library,
            max_workgroups: limits.max_compute_workgroups_per_dimension,
            layer_def_buffer,
            frame_bytes: vec![0; frame_buffer.size() as usize],
            frame_buffer,
            frame_stride,
            event_log,
            event_capacity: 0,
            pages,
            passes,
            fused,
            use_fused: false,
            uploaded: 0,
            previous_copy: PreviousCopy::Off,
            previous_prepared: false,
            frames: 0,
            encodes: AtomicU32::new(0),
            recovery: None,
            checkpoint_copies: Vec::new(),
            ring: None,
        })
    }

    /// Whether this animator can run the fused single-dispatch path: skeletons of at most
    /// [`MAX_FUSED_JOINTS`] joints (its bindings and workgroup memory fit WebGPU's defaults).
    #[must_use]
    pub fn fused_available(&self) -> bool {
        self.fused.is_some()
    }

    /// The library on the GPU (to share with another animator, [`Animator::with_library`]).
    #[must_use]
    pub fn gpu_library(&self) -> &Arc<GpuLibrary> {
        &self.gpu_library
    }

    /// Every instance's state on the CPU (also reachable as the animator itself, through `Deref`).
    #[must_use]
    pub fn controller(&self) -> &Controller {
        &self.controller
    }

    /// Bytes the last [`Animator::prepare`] wrote to the GPU (frame uniforms, instances, clocks,
    /// layer definitions).
    #[must_use]
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded
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

    /// Uploads this frame's `dt` and whatever instance data and layer definitions changed since
    /// the last call ([`Controller::begin_frame`]). An ordinary frame, with no instance changed,
    /// makes one write: the frame uniforms of the pages in use (32 bytes each, in slots of the
    /// device's uniform offset alignment, 256 bytes by default).
    pub fn prepare(&mut self, queue: &wgpu::Queue, dt: f32) {
        let upload = self.controller.begin_frame(dt);
        if self.previous_copy != PreviousCopy::Off {
            // The first frame after keeping began copies after its passes, the others before.
            if self.previous_prepared {
                self.previous_copy = PreviousCopy::Before;
            }
            self.previous_prepared = true;
        }
        self.uploaded = self.write_upload(queue, &upload);
        self.frames += 1;
        let encodes = self.encodes.swap(0, Ordering::Relaxed);
        if let Some(ring) = &mut self.ring {
            ring.begin_frame(self.frames, encodes > 0);
        }
        if let Some(recovery) = &mut self.recovery {
            let pages = &self.controller;
            self.checkpoint_copies = recovery.next_frame(encodes, upload, self.use_fused, pages, |page| {
                pages.page_max_joints(page)
            });
        }
    }

    /// Writes what `upload` says changed; returns the bytes written.
    fn write_upload(&mut self, queue: &wgpu::Queue, upload: &FrameUpload) -> u64 {
        let stride = self.frame_stride as usize;
        let mut frame_end = 0;
        for (page, frame) in &upload.frames {
            let at = page * stride;
            self.frame_bytes[at..at + size_of::<GpuFrame>()].copy_from_slice(bytemuck::bytes_of(frame));
            frame_end = frame_end.max(at + size_of::<GpuFrame>());
        }
        if frame_end > 0 {
            queue.write_buffer(&self.frame_buffer, 0, &self.frame_bytes[..frame_end]);
        }
        if let Some((first, defs)) = &upload.layer_defs {
            queue.write_buffer(
                &self.layer_def_buffer,
                (first * size_of::<GpuLayerDef>()) as u64,
                bytemuck::cast_slice(defs),
            );
        }
        for (page, first, instances) in &upload.instances {
            queue.write_buffer(
                &self.pages[*page].instance_buffer,
                (first * size_of::<GpuInstance>()) as u64,
                bytemuck::cast_slice(instances),
            );
        }
        for (page, first, clocks) in &upload.clocks {
            queue.write_buffer(
                &self.pages[*page].clock_buffer,
                (first * size_of::<GpuClock>()) as u64,
                bytemuck::cast_slice(clocks),
            );
        }
        // The frame uniforms go up with the gaps between their slots.
        let frames_counted = (upload.frames.len() * size_of::<GpuFrame>()) as u64;
        upload.bytes() - frames_counted + frame_end as u64
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
        self.dispatches_per_page() * self.controller.pages_in_use() as u32
    }

    /// Records the frame's passes — clock, sample, local_to_model, palette — into `encoder`.
    /// With previous palettes kept ([`Animator::keep_previous_palettes`]), also the copy of
    /// each page's palettes in use into its previous palettes.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) {
        self.encode_timed(encoder, None);
    }

    /// As [`Animator::encode`], writing timestamps around each pass (pass `k` is stage `k` of
    /// [`Stage::COMPUTE`]) when a timer with at least four passes is given.
    pub fn encode_timed(&self, encoder: &mut wgpu::CommandEncoder, timer: Option<&PassTimer>) {
        self.encodes.fetch_add(1, Ordering::Relaxed);
        if self.previous_copy == PreviousCopy::Before {
            self.copy_previous_palettes(encoder);
        }
        let in_use = self.controller.pages_in_use();
        self.encode_passes(encoder, timer, self.use_fused, in_use, |page| {
            self.controller.page_range(page).len() as u32
        });
        if self.previous_copy == PreviousCopy::After {
            self.copy_previous_palettes(encoder);
        }
        if let Some(ring) = &self.ring {
            if let Some(buffer) = ring.current_buffer() {
                let matrix = size_of::<Affine>() as u64;
                let l = &ring.layout;
                for c in &l.sockets {
                    let source = &self.pages[c.page].palette_buffer;
                    encoder.copy_buffer_to_buffer(source, c.element * matrix, buffer, c.dst * matrix, c.count * matrix);
                }
                let root = size_of::<GpuOutput>() as u64;
                for c in &l.roots {
                    let source = &self.pages[c.page].output_buffer;
                    let dst = l.roots_at() + c.dst * root;
                    encoder.copy_buffer_to_buffer(source, c.element * root, buffer, dst, c.count * root);
                }
                if l.event_bytes > 0 {
                    encoder.copy_buffer_to_buffer(&self.event_log, 0, buffer, l.events_at(), l.event_bytes);
                }
            }
        }
        if let Some(buffer) = self.recovery.as_ref().and_then(Recovery::checkpoint_buffer) {
            for c in &self.checkpoint_copies {
                let page = &self.pages[c.page];
                let source = match c.source {
                    CheckpointSource::Clocks => &page.clock_buffer,
                    CheckpointSource::Outputs => &page.output_buffer,
                    CheckpointSource::LocalPoses => &page.local_buffer,
                };
                encoder.copy_buffer_to_buffer(source, c.offset, buffer, c.dst, c.bytes);
            }
        }
    }

    /// Copies the palettes in use of every page to its previous palettes.
    fn copy_previous_palettes(&self, encoder: &mut wgpu::CommandEncoder) {
        for (k, page) in self.pages.iter().enumerate().take(self.controller.pages_in_use()) {
            let bytes = self
                .controller
                .page_state(k)
                .map_or(0, |p| u64::from(p.joints_used) * size_of::<Affine>() as u64);
            if let (Some(previous), true) = (&page.previous_palette, bytes > 0) {
                encoder.copy_buffer_to_buffer(&page.palette_buffer, 0, previous, 0, bytes);
            }
        }
    }

    /// Records the passes of a frame of `in_use` pages, page `k` with `count(k)` instances, on
    /// the fused path if `fused` (and it is available).
    fn encode_passes(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timer: Option<&PassTimer>,
        fused: bool,
        in_use: usize,
        count: impl Fn(usize) -> u32,
    ) {
        if self.event_capacity > 0 && in_use > 0 {
            // This frame's log starts empty: its count and overflow (records past the count
            // are never read).
            encoder.clear_buffer(&self.event_log, 0, Some(size_of::<GpuEventLogHead>() as u64));
        }
        let fused = self.fused.as_ref().filter(|_| fused);
        let passes: &[StagePipeline] = match fused {
            Some(f) => std::slice::from_ref(f),
            None => &self.passes,
        };
        for (k, pass) in passes.iter().enumerate() {
            // One pass per stage, each page a dispatch in it; timestamps around the pass.
            if in_use == 0 {
                return;
            }
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(pass.stage.name()),
                timestamp_writes: timer.and_then(|t| t.compute_writes(k as u32)),
            });
            cpass.set_pipeline(&pass.pipeline);
            for (k_page, page) in self.pages.iter().enumerate().take(in_use) {
                let n = count(k_page);
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
    /// The palette buffer of page `page` (its instances' `joint_offset`s index it; with sockets,
    /// [`Animator::socket_slot`] says where each socket matrix is).
    #[must_use]
    pub fn page_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| &p.palette_buffer)
    }

    /// Where instance `index`'s socket `socket` (of its skeleton's [`crate::Skeleton::sockets`])
    /// is written each frame: `(page, element)`, the element an `Affine` (3×4 rows, 48 bytes) of
    /// that page's palette buffer. The matrix is `world · model[joint] · offset`, the socket in
    /// world space: a prop drawn with it follows the joint with no CPU work. A page's socket
    /// matrices start after its joint capacity, instance `k` of the page at `k · MAX_SOCKETS`.
    /// `None` for an instance or socket that does not exist.
    #[must_use]
    pub fn socket_slot(&self, index: usize, socket: usize) -> Option<(usize, u64)> {
        let inst = self.controller.instance(index)?;
        let sockets = self.controller.library().gpu_skeletons()[inst.skeleton as usize].socket_count;
        if socket >= sockets as usize {
            return None;
        }
        let (page, k) = self.controller.page_of(index)?;
        let first = u64::from(self.controller.page_max_joints(page));
        Some((page, first + k as u64 * u64::from(MAX_SOCKETS) + socket as u64))
    }

    /// Reads back the world matrices of `sockets` (`(character, socket)` pairs) after every
    /// frame from now on, without the CPU ever waiting for the GPU: each frame's passes end
    /// with a copy into a ring of [`READBACK_SLOTS`](super::READBACK_SLOTS) readback buffers,
    /// which [`Animator::prepare`] maps and reads once the GPU is done with the frame;
    /// [`Animator::take_readbacks`] hands them over, each tagged with its frame. Latency: a
    /// frame's data arrive at the first prepare after the GPU has finished it — the next one
    /// when the GPU keeps up, later when it lags — and a frame that finds every slot still in
    /// flight is not read back ([`Animator::readback_skipped`]) rather than waited for. An
    /// empty list stops reading sockets (events and roots watched go on). Watch again after
    /// adding or removing characters (the matrices are read from where those characters were).
    /// Submit each frame before the next prepare.
    ///
    /// Errors (nothing changes): a character or socket that does not exist (naming it), buffers
    /// the device refuses.
    pub fn watch_sockets(&mut self, device: &wgpu::Device, sockets: &[(usize, usize)]) -> Result<()> {
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &(index, socket)) in sockets.iter().enumerate() {
            let (page, element) = self.socket_slot(index, socket).ok_or_else(|| Error::Instance {
                instance: index,
                what: format!("has no socket {socket} to watch (or does not exist)"),
            })?;
            push_copy(&mut copies, page, element, k);
        }
        let layout = RingLayout {
            sockets: copies,
            socket_count: sockets.len(),
            ..self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
        };
        self.ring = make_ring(device, layout)?;
        Ok(())
    }

    /// Reads back what the clock stage gives back for `characters` ([`GpuOutput`]) with every
    /// frame — root motion (world transform, the frame's displacement) and float curve values —
    /// through the same ring and with the same latency as [`Animator::watch_sockets`]
    /// ([`FrameReadback::outputs`](super::FrameReadback)). The GPU writes a character's root
    /// motion only while it has root motion on ([`Controller::set_root_motion`]), and curves
    /// when the library has any. An empty list stops. Watch again after adding or removing
    /// characters.
    ///
    /// Errors (nothing changes): a character that does not exist, buffers the device refuses.
    pub fn watch_outputs(&mut self, device: &wgpu::Device, characters: &[usize]) -> Result<()> {
        let mut copies: Vec<RingCopy> = Vec::new();
        for (k, &index) in characters.iter().enumerate() {
            let (page, element) = self.controller.page_of(index).ok_or_else(|| Error::Instance {
                instance: index,
                what: "does not exist: its root cannot be watched".into(),
            })?;
            push_copy(&mut copies, page, element as u64, k);
        }
        let layout = RingLayout {
            roots: copies,
            root_count: characters.len(),
            ..self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
        };
        self.ring = make_ring(device, layout)?;
        Ok(())
    }

    /// Reads back page `page`'s outputs, one [`GpuOutput`] per instance in use (root motion only
    /// for instances with it on, curves when the library has any). For tests and tools; waits for
    /// the GPU.
    pub fn read_outputs_page(&self, device: &wgpu::Device, queue: &wgpu::Queue, page: usize) -> Result<Vec<GpuOutput>> {
        let (p, state) = self.page(page)?;
        read_buffer(device, queue, &p.output_buffer, 0, state.len as u64)
    }

    /// Detects clip events ([`crate::ClipEvent`]) from the next frame on and reads them back
    /// with every frame ([`Animator::take_readbacks`], [`FrameReadback::events`](super::FrameReadback)),
    /// through the same ring and with the same latency as [`Animator::watch_sockets`]; `capacity`
    /// records per frame (0 stops). Each frame the clock stage (or the fused one) appends a
    /// [`GpuEventRecord`] for every event a character's playback of a clip crossed — forward or
    /// backward, through loop wraps, once per crossing (several loops in one frame make one
    /// record with `crossings` > 1) — while the clip's weight is at least the event's
    /// threshold, to a log with an atomic counter; records past `capacity` are counted
    /// ([`FrameReadback::events_overflow`](super::FrameReadback)), never written out of bounds.
    /// The records of one frame come in any order (GPU threads race for the counter).
    ///
    /// Costs, while on: the clock stage compares each playing clip's events with its
    /// time; a 16-byte clear and a copy of `16 + 32 · capacity` bytes per frame.
    ///
    /// Errors (nothing changes): a log larger than the device's storage binding size, buffers the
    /// device refuses.
    pub fn watch_events(&mut self, device: &wgpu::Device, capacity: u32) -> Result<()> {
        let bytes = if capacity == 0 {
            0
        } else {
            (size_of::<GpuEventLogHead>() + capacity as usize * size_of::<GpuEventRecord>()) as u64
        };
        let cap = device.limits().max_storage_buffer_binding_size;
        if bytes > cap {
            return Err(Error::Limit {
                what: format!(
                    "an event log of {capacity} records takes {bytes} bytes; the device allows {cap} per storage buffer"
                ),
            });
        }
        let layout = RingLayout {
            event_bytes: bytes,
            ..self.ring.as_ref().map(|r| r.layout.clone()).unwrap_or_default()
        };
        let ring = make_ring(device, layout)?;
        let log = super::refusable(
            device,
            || "the event log".to_owned(),
            || event_log_buffer(device, capacity),
        )?;
        self.ring = ring;
        self.event_log = log;
        self.event_capacity = capacity;
        self.controller.set_detect_events(capacity > 0);
        self.bind_pages(device);
        Ok(())
    }

    /// The event log the clock (or fused) pass appends to: a [`GpuEventLogHead`] (the count of
    /// records appended, those past the capacity included, and the overflow) then
    /// [`Animator::event_capacity`] [`GpuEventRecord`]s; cleared at the start of each frame's
    /// passes. For a GPU consumer of events of your own (a pass after the animator's that spawns
    /// particles where feet land, say). Usage: STORAGE | COPY_SRC | COPY_DST.
    #[must_use]
    pub fn event_log_buffer(&self) -> &wgpu::Buffer {
        &self.event_log
    }

    /// Reads back the events the last frame fired and the count of those that did not fit.
    /// For tests and tools; waits for the GPU ([`Animator::watch_events`] reads them without
    /// waiting).
    pub fn read_events(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<(Vec<GpuEventRecord>, u32)> {
        if self.event_capacity == 0 {
            return Ok((Vec::new(), 0));
        }
        let head: Vec<GpuEventLogHead> = read_buffer(device, queue, &self.event_log, 0, 1)?;
        let head = head[0];
        let kept = head.count.min(self.event_capacity);
        // The records follow the 16-byte head: read as 16-byte units, two per record.
        let units: Vec<GpuEventLogHead> = read_buffer(device, queue, &self.event_log, 1, 2 * u64::from(kept))?;
        let records = bytemuck::cast_slice::<GpuEventLogHead, GpuEventRecord>(&units).to_vec();
        Ok((records, head.overflow))
    }

    /// The event log's capacity in records per frame (0: events not watched).
    #[must_use]
    pub fn event_capacity(&self) -> u32 {
        self.event_capacity
    }

    /// Remakes every page's bind groups (after the event log changed).
    fn bind_pages(&mut self, device: &wgpu::Device) {
        let frame_size = size_of::<GpuFrame>() as u64;
        for (k, page) in self.pages.iter_mut().enumerate() {
            page.bind(
                device,
                k,
                &self.gpu_library,
                &self.layer_def_buffer,
                wgpu::BufferBinding {
                    buffer: &self.frame_buffer,
                    offset: k as u64 * self.frame_stride,
                    size: std::num::NonZeroU64::new(frame_size),
                },
                &self.event_log,
                &self.passes,
                self.fused.as_ref(),
            );
        }
    }

    /// The frames read back since the last call ([`Animator::watch_sockets`]), oldest first,
    /// each once.
    pub fn take_readbacks(&mut self) -> Vec<FrameReadback> {
        self.ring.as_mut().map(Ring::take).unwrap_or_default()
    }

    /// Waits for the GPU to finish the frames submitted and reads back those it copied (for
    /// [`Animator::take_readbacks`]): for a caller that needs frame `f − k`'s data at frame `f`
    /// whatever the GPU's pace, and accepts waiting when the GPU is more than `k` frames behind.
    /// The ring itself never waits.
    pub fn wait_readbacks(&mut self) {
        if let Some(ring) = &mut self.ring {
            ring.wait();
        }
    }

    /// Frames not read back because every slot of the ring was still in flight (the GPU more
    /// than [`READBACK_SLOTS`](super::READBACK_SLOTS) frames behind): the CPU skips them
    /// instead of waiting.
    #[must_use]
    pub fn readback_skipped(&self) -> u64 {
        self.ring.as_ref().map_or(0, |r| r.skipped)
    }

    /// The number of the frame last prepared (frames count from 1; 0 before the first).
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.frames
    }

    /// Reads back page `page`'s socket matrices: [`MAX_SOCKETS`] per instance in use, in
    /// instance order. Slots past a skeleton's sockets are not written (zero, unless an instance
    /// removed from that place used them). Empty when the library has no sockets. For tests and
    /// tools; waits for the GPU.
    pub fn read_sockets_page(&self, device: &wgpu::Device, queue: &wgpu::Queue, page: usize) -> Result<Vec<Affine>> {
        let (p, state) = self.page(page)?;
        if !self.controller.library().has_sockets() {
            return Ok(Vec::new());
        }
        read_buffer(
            device,
            queue,
            &p.palette_buffer,
            u64::from(state.max_joints),
            state.len as u64 * u64::from(MAX_SOCKETS),
        )
    }
    /// Keeps (or stops keeping) each page's previous-frame palettes, for motion vectors: a
    /// buffer per page beside the palettes ([`Animator::page_previous_palette_buffer`]) that every
    /// frame's [`Animator::encode`] fills with the palettes before its passes overwrite them (a
    /// copy of the joints in use). On the first frame after this call it holds that frame's own
    /// palettes (no motion); an instance added since the last frame has no previous pose, and
    /// its previous palettes are whatever its joints held. Off by default: no buffer, no copy.
    ///
    /// Errors: buffers the device refuses ([`Error::Refused`]); then nothing changes.
    pub fn keep_previous_palettes(&mut self, device: &wgpu::Device, keep: bool) -> Result<()> {
        if !keep {
            for page in &mut self.pages {
                page.previous_palette = None;
            }
            self.previous_copy = PreviousCopy::Off;
            return Ok(());
        }
        if self.previous_copy != PreviousCopy::Off {
            return Ok(());
        }
        let buffers = super::refusable(
            device,
            || "the previous palettes".to_owned(),
            || {
                self.pages
                    .iter()
                    .enumerate()
                    .map(|(k, page)| {
                        device.create_buffer(&wgpu::BufferDescriptor {
                            label: Some(&format!("wgpu-anim page {k} previous palettes")),
                            size: page.palette_buffer.size(),
                            usage: page.palette_buffer.usage(),
                            mapped_at_creation: false,
                        })
                    })
                    .collect::<Vec<_>>()
            },
        )?;
        for (page, buffer) in self.pages.iter_mut().zip(buffers) {
            page.previous_palette = Some(buffer);
        }
        self.previous_copy = PreviousCopy::After;
        self.previous_prepared = false;
        Ok(())
    }

    /// Keeps what [`Animator::rebuild`] needs to rebuild this animator on a new device when
    /// `device` is lost, checkpointing every `interval` frames (`None` stops it). Off by default.
    ///
    /// A device can be lost at any time: a driver reset, a GPU removed, a laptop switching
    /// GPUs, the browser dropping the context. What a frame carries over from the one before is
    /// on that device: the instances' clocks and the snapshot poses of interrupted cross-fades.
    /// With recovery on, every `interval` frames, [`Animator::encode`] also copies the clocks
    /// in use and the snapshots still in use into a readback buffer, which
    /// [`Animator::prepare`] maps without waiting and takes in once the GPU is done (it polls
    /// `device` without blocking); and every frame since is logged: what it uploaded, its path,
    /// and how many times its passes were encoded.
    ///
    /// Costs: `64` bytes per instance in use and `48` per joint of a snapshot in use read back per
    /// checkpoint; a copy of the instances (256 bytes each) on the CPU; the uploads of up to about
    /// `interval` frames kept. A rebuild replays up to about `interval + 2` frames on the new
    /// device ([`Animator::recovery_frames`]).
    ///
    /// Call it before the first frame, or the first rebuild is possible once the first
    /// checkpoint is back (a few frames later). Submit each frame's encoder before the next
    /// `prepare` (as any frame loop does): the readback is mapped then.
    pub fn set_recovery(&mut self, device: &wgpu::Device, interval: Option<std::num::NonZeroU32>) {
        self.recovery = interval.map(|n| Recovery::new(device, n.get(), self.frames));
        self.checkpoint_copies.clear();
    }

    /// Frames a rebuild would replay now (those since the newest checkpoint back from the GPU),
    /// or `None` when it cannot rebuild: recovery is off, or no checkpoint is back yet.
    #[must_use]
    pub fn recovery_frames(&self) -> Option<usize> {
        let r = self.recovery.as_ref()?;
        r.base.as_ref().map(|_| r.log.len())
    }

    /// A new animator on `device` (its device lost, or any other) in the state this one
    /// reached after its last prepared frame, the library uploaded again: [`Animator::rebuild_with_library`].
    ///
    /// Errors: as [`Animator::rebuild_with_library`], and a library the device refuses.
    pub fn rebuild(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Self> {
        let library = GpuLibrary::new(device, self.controller.library())?;
        self.rebuild_with_library(device, queue, library)
    }

    /// A new animator on `device`, playing `gpu_library` (this animator's library, uploaded to
    /// `device`), in the state this one reached after its last prepared frame: the same
    /// instances, pages and layer definitions, the edits made since that frame still to upload,
    /// the clocks and snapshots of its newest checkpoint, and every frame since replayed (the
    /// path each frame took, its uploads, as many encodes): its next frame continues from where
    /// this one was — on the same kind of device, bit for bit. Recovery stays on, with the same
    /// interval; previous palettes, if kept, start again (the first frame shows no motion); the
    /// watched sockets stay watched (the frames in flight on the old device are not read back).
    /// This animator is only read: its device may be lost.
    ///
    /// Errors ([`Error::Recovery`]): recovery is off ([`Animator::set_recovery`]) or no
    /// checkpoint is back yet, `gpu_library` plays another library, or `device` cannot hold this
    /// animator's pages; buffers or pipelines the device refuses.
    pub fn rebuild_with_library(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        gpu_library: Arc<GpuLibrary>,
    ) -> Result<Self> {
        let fail = |what: &str| Error::Recovery { what: what.to_owned() };
        let recovery = self
            .recovery
            .as_ref()
            .ok_or_else(|| fail("recovery is off (Animator::set_recovery)"))?;
        let base = recovery
            .base
            .as_ref()
            .ok_or_else(|| fail("no checkpoint is back from the GPU yet"))?;
        if !Arc::ptr_eq(gpu_library.library_arc(), self.controller.library_arc())
            && super::LibraryHeap::new(gpu_library.library()) != super::LibraryHeap::new(self.controller.library())
        {
            return Err(fail("the library given is not this animator's"));
        }
        let layout: Vec<(u32, u32)> = (0..self.controller.page_count())
            .map(|k| (self.controller.page_capacity(k), self.controller.page_max_joints(k)))
            .collect();
        check_pages(&device.limits(), &layout, self.controller.library().has_sockets()).map_err(|what| fail(&what))?;
        let max_instances = self.controller.max_instances();
        let mut next = Self::with_pages(device, gpu_library, max_instances, &layout)?;
        // The checkpoint: every layer definition (those of later frames too: none is read before
        // its frame), the instances of its frame, the clocks and snapshots after it.
        let defs = self.controller.layer_defs();
        queue.write_buffer(&next.layer_def_buffer, 0, bytemuck::cast_slice(defs));
        next.restore(queue, base);
        // Every frame since, as it ran.
        let last = recovery.log.len().saturating_sub(1);
        for (k, frame) in recovery.log.iter().enumerate() {
            next.write_upload(queue, &frame.upload);
            let encodes = if k == last {
                self.encodes.load(Ordering::Relaxed)
            } else {
                frame.encodes
            };
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("wgpu-anim rebuild"),
            });
            let in_use = frame.upload.frames.iter().map(|(p, _)| p + 1).max().unwrap_or(0);
            for _ in 0..encodes {
                next.encode_passes(&mut encoder, None, frame.fused, in_use, |page| {
                    frame
                        .upload
                        .frames
                        .iter()
                        .find(|(p, _)| *p == page)
                        .map_or(0, |(_, f)| f.instance_count)
                });
            }
            queue.submit([encoder.finish()]);
        }
        next.controller = self.controller.clone();
        next.use_fused = self.use_fused && next.fused.is_some();
        next.frames = self.frames;
        // The last frame's encodes, which its log entry takes at the next prepare.
        next.encodes
            .store(self.encodes.load(Ordering::Relaxed), Ordering::Relaxed);
        next.recovery = Some(recovery.moved_to(device));
        next.ring = self.ring.as_ref().map(|r| r.moved_to(device));
        if self.event_capacity > 0 {
            next.event_log = super::refusable(
                device,
                || "the event log".to_owned(),
                || event_log_buffer(device, self.event_capacity),
            )?;
            next.event_capacity = self.event_capacity;
            next.bind_pages(device);
        }
        if self.previous_copy != PreviousCopy::Off {
            next.keep_previous_palettes(device, true)?;
        }
        Ok(next)
    }

    /// Writes checkpoint `base` to this animator's buffers.
    fn restore(&self, queue: &wgpu::Queue, base: &Checkpoint) {
        for (page, instances) in base.instances.iter().enumerate().take(self.pages.len()) {
            queue.write_buffer(&self.pages[page].instance_buffer, 0, bytemuck::cast_slice(instances));
        }
        for (page, clocks) in base.clocks.iter().enumerate().take(self.pages.len()) {
            queue.write_buffer(&self.pages[page].clock_buffer, 0, bytemuck::cast_slice(clocks));
        }
        for (page, roots) in base.roots.iter().enumerate().take(self.pages.len()) {
            queue.write_buffer(&self.pages[page].output_buffer, 0, bytemuck::cast_slice(roots));
        }
        for (page, first, poses) in &base.snapshots {
            let joint = u64::from(self.controller.page_max_joints(*page)) + u64::from(*first);
            queue.write_buffer(
                &self.pages[*page].local_buffer,
                joint * size_of::<LocalPose>() as u64,
                bytemuck::cast_slice(poses),
            );
        }
    }

    /// Page `page`'s previous-frame palettes (laid out as its palettes), when they are kept
    /// ([`Animator::keep_previous_palettes`]).
    #[must_use]
    pub fn page_previous_palette_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).and_then(|p| p.previous_palette.as_ref())
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
    /// Outputs of the first page (`GpuOutput` per instance: root motion, float curves), written by
    /// `clock` (and `fused`); a buffer your own shaders may read (a blend-shape weight, a
    /// foot-plant flag).
    #[must_use]
    pub fn output_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].output_buffer
    }
    /// The output buffer of page `page` (instance `page_range(page).start + k` at `k`).
    #[must_use]
    pub fn page_output_buffer(&self, page: usize) -> Option<&wgpu::Buffer> {
        self.pages.get(page).map(|p| &p.output_buffer)
    }
    /// Blend lists of the first page (`BlendList` per instance), written by `clock`, read by
    /// `sample` (the fused path keeps them in workgroup memory and does not write them).
    #[must_use]
    pub fn blend_list_buffer(&self) -> &wgpu::Buffer {
        &self.pages[0].blend_list_buffer
    }
    /// The layer definition uniform ([`Controller::layer_defs`], room for [`MAX_LAYER_DEFS`]).
    #[must_use]
    pub fn layer_def_buffer(&self) -> &wgpu::Buffer {
        &self.layer_def_buffer
    }
    /// Joint capacity of the first page: its local pose buffer holds this many current poses,
    /// then as many snapshots.
    #[must_use]
    pub fn max_joints(&self) -> u32 {
        self.controller.page_max_joints(0)
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
        let (p, state) = self.page(page)?;
        let (n, j) = (state.len as u64, u64::from(state.joints_used));
        Ok((
            read_buffer(device, queue, &p.clock_buffer, 0, n)?,
            Pose {
                local: read_buffer(device, queue, &p.local_buffer, 0, j)?,
                model: read_buffer(device, queue, &p.model_buffer, 0, j)?,
                palette: read_buffer(device, queue, &p.palette_buffer, 0, j)?,
                sockets: self.read_sockets_page(device, queue, page)?,
            },
        ))
    }

    fn page(&self, page: usize) -> Result<(&Page, &PageState)> {
        match (self.pages.get(page), self.controller.page_state(page)) {
            (Some(p), Some(state)) => Ok((p, state)),
            _ => Err(Error::Limit {
                what: format!("page {page} does not exist ({} pages)", self.pages.len()),
            }),
        }
    }

    /// Reads back the blend lists of page `page`, as the `clock` stage last wrote them.
    pub fn read_blend_lists_page(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        page: usize,
    ) -> Result<Vec<BlendList>> {
        let (p, state) = self.page(page)?;
        read_buffer(device, queue, &p.blend_list_buffer, 0, state.len as u64)
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
        let (p, state) = self.page(page)?;
        read_buffer(
            device,
            queue,
            &p.local_buffer,
            u64::from(region.min(2)) * u64::from(state.max_joints),
            u64::from(state.joints_used),
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

impl std::ops::Deref for Animator {
    type Target = Controller;

    fn deref(&self) -> &Controller {
        &self.controller
    }
}

impl std::ops::DerefMut for Animator {
    fn deref_mut(&mut self) -> &mut Controller {
        &mut self.controller
    }
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
        let slots = MAX_SOCKETS as usize;
        poses.extend(animator.page_instances(page).iter().enumerate().map(|(k, inst)| {
            let r = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
            Pose {
                local: all.local[r.clone()].to_vec(),
                model: all.model[r.clone()].to_vec(),
                palette: all.palette[r].to_vec(),
                sockets: all.sockets.get(k * slots..(k + 1) * slots).unwrap_or_default().to_vec(),
            }
        }));
    }
    Ok(poses)
}
