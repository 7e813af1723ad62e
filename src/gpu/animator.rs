//! [`Animator`]: the frame executor — every page's buffers, the pipelines, the uploads and the
//! compute passes of a frame recorded into the caller's encoder — around a [`Controller`], every
//! instance's state on the CPU.

use super::controller::{Controller, FrameUpload};
use super::page::{Page, Shared, StagePipeline, page_layout};
use super::pipeline::{THREAD_PER_CHARACTER, stage_pipeline};
use super::read_back::Watches;
use super::recovery::RecoveryState;
use super::{AnimatorDesc, CharacterThreads, GpuLibrary, HierarchyWalk};
use super::{PassTimer, split_dispatch};
use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::layout::{
    GpuClock, GpuEventLogHead, GpuEventRecord, GpuFrame, GpuInstance, GpuLayerDef, MAX_FUSED_JOINTS, MAX_LAYER_DEFS,
    WORKGROUP_SIZE,
};
use crate::library::AnimationLibrary;
use crate::shaders::PageOptions;
use crate::shaders::{Resource, Stage};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

mod previous;

use previous::PreviousCopy;

/// The GPU side of a crowd: the clip library uploaded once, every instance's parameters, clock,
/// local pose, model pose and palette in storage buffers, and the compute passes of a frame (four,
/// five with IK chains, or the clock and the fused pass).
///
/// Per frame: call [`Animator::prepare`] (uploads `dt` and any instance parameters that changed)
/// then [`Animator::encode`] into your command encoder, then draw with the palette buffer.
/// Encoding or drawing before the first `prepare` is an error ([`Error::NotPrepared`]): nothing
/// is on the GPU to animate or draw.
///
/// An animator holds a [`Controller`] — every instance's state on the CPU, with no device:
/// `add_instance`, `play`, `set_layer`, IK goals, ... — reached through
/// [`Animator::controller_mut`] (and [`Animator::controller`] to read it); the animator itself is
/// the frame executor: the pages' buffers, the pipelines, the uploads and the passes.
/// `animator.controller_mut().play(..)` changes a character, the next `prepare` uploads it.
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
    /// The IK stage's ground function ([`AnimatorDesc::ground`]), kept for a rebuild.
    ground: Option<&'static str>,
    /// The fused pass's walk as asked for ([`AnimatorDesc::hierarchy_walk`]), kept for a
    /// rebuild, and as chosen on this device (never `Auto`).
    walk: (HierarchyWalk, HierarchyWalk),
    /// The threads per character as asked for ([`AnimatorDesc::character_threads`]), kept for a
    /// rebuild, and as chosen on this device (never `Auto`).
    threads: (CharacterThreads, CharacterThreads),
    pages: Vec<Page>,
    passes: Vec<StagePipeline>,
    fused: Option<StagePipeline>,
    use_fused: bool,
    /// Whether the passes recorded since the last prepare leave in the local pose buffer the
    /// poses the next frame may take inertialized transitions' velocities from: the last one
    /// that touched it was the staged `sample` pass (the fused pass keeps no local pose).
    poses_left: AtomicBool,
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
    recovery: RecoveryState,
    /// The last frame's upload, emptied, whose room the next frame reuses (when no recovery
    /// log keeps it).
    spare_upload: FrameUpload,
    /// What is read back every frame ([`Animator::watch_sockets`], [`Animator::watch_events`]).
    watches: Watches,
}

/// Workgroup memory the fused path uses: 128 local poses (48 B), three vec4 arrays, culling's
/// mark and the number of levels.
/// With IK chains, the IK stage's: its `ik` word, four pivots and their joints, four ground targets,
/// the lift and the reached chains. With `CLIP_TIMES`, the sample stage's key times and span of
/// each blend-list sample (24 B).
const FUSED_WORKGROUP_BYTES: u32 =
    MAX_FUSED_JOINTS * (48 + 3 * 16) + 4 + 4 + 4 + 4 * (48 + 4 + 16) + 16 + 4 + crate::layout::MAX_BLEND_CLIPS * 24;

/// Page `k`'s slot of the frame uniform buffer.
fn frame_slot(frame_buffer: &wgpu::Buffer, stride: u64, k: usize) -> wgpu::BufferBinding<'_> {
    wgpu::BufferBinding {
        buffer: frame_buffer,
        offset: k as u64 * stride,
        size: std::num::NonZeroU64::new(size_of::<GpuFrame>() as u64),
    }
}

fn storage(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(16),
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The event log buffer for `capacity` records: its head (`GpuEventLogHead`) then the records.
pub(super) fn event_log_buffer(device: &wgpu::Device, capacity: u32) -> wgpu::Buffer {
    storage(
        device,
        "wgpu-anim event log",
        (size_of::<GpuEventLogHead>() + capacity.max(1) as usize * size_of::<GpuEventRecord>()) as u64,
    )
}

// Creating an animator: on a device, for a library (uploaded, or shared with another animator).
impl Animator {
    /// Uploads `library` and allocates buffers for `desc`'s capacity on `device`. To share one
    /// upload of a library between animators, use [`Animator::with_library_async`].
    ///
    /// `async` because it waits for the device to accept its pipelines and buffers: `.await` it in
    /// a browser; natively [`Animator::new`] blocks on it.
    ///
    /// Errors: a capacity of zero, or buffers larger than the device's
    /// `max_storage_buffer_binding_size` (the message says which and by how much); a stage's
    /// pipeline the device refuses ([`Error::Refused`], naming the stage).
    pub async fn new_async(device: &wgpu::Device, library: &AnimationLibrary, desc: &AnimatorDesc) -> Result<Self> {
        let gpu_library = GpuLibrary::new_async(device, library).await?;
        Self::with_library_async(device, gpu_library, desc).await
    }

    blocking! {
        /// [`Animator::new_async`], blocking until the device answers (native only: a browser cannot
        /// block).
        ///
        /// Errors: as [`Animator::new_async`].
        pub fn new(
            device: &wgpu::Device,
            library: &AnimationLibrary,
            desc: &AnimatorDesc,
        ) -> Result<Self> = Self::new_async;

        /// [`Animator::with_library_async`], blocking until the device answers (native only).
        ///
        /// Errors: as [`Animator::new_async`].
        pub fn with_library(
            device: &wgpu::Device,
            gpu_library: Arc<GpuLibrary>,
            desc: &AnimatorDesc,
        ) -> Result<Self> = Self::with_library_async;
    }

    /// Allocates buffers for `desc`'s capacity on `device`, playing a library already on the GPU.
    ///
    /// Errors: as [`Animator::new_async`].
    pub async fn with_library_async(
        device: &wgpu::Device,
        gpu_library: Arc<GpuLibrary>,
        desc: &AnimatorDesc,
    ) -> Result<Self> {
        let library = gpu_library.library();
        let largest = library.gpu_skeletons().iter().map(|s| s.joint_count).max().unwrap_or(0);
        if desc.max_instances == 0 || library.clips().is_empty() {
            return Err(Error::Limit {
                what: "an animator needs room for at least one instance and a library with at least one clip".into(),
            });
        }
        if desc.morph_weights > crate::layout::MAX_MORPH_TARGETS {
            return Err(Error::Limit {
                what: format!(
                    "room for {} morph weights per instance; an animator keeps at most {}",
                    desc.morph_weights,
                    crate::layout::MAX_MORPH_TARGETS
                ),
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
        let options = PageOptions {
            sockets: library.has_sockets(),
            dual_quaternion: desc.dual_quaternion,
            morph_weights: desc.morph_weights,
            inertialization: desc.inertialization,
            culling: desc.culling,
            lod_interpolation: desc.culling && desc.lod_interpolation,
            layers: desc.layers,
        };
        let layout = page_layout(
            &device.limits(),
            desc.max_instances,
            desc.page_instances,
            max_joints,
            desc.max_joints.is_some(),
            largest,
            options,
        )?;
        Self::with_pages(
            device,
            gpu_library,
            desc.max_instances,
            &layout,
            options,
            (desc.ground, (desc.hierarchy_walk, desc.character_threads), desc.layers),
        )
        .await
    }

    /// Allocates pages of capacities `layout` (`(instances, joints)` each) for up to
    /// `max_instances` instances, with what `options` asks beside the poses (dual-quaternion
    /// palettes, morph weights, the velocities of inertialized transitions), its IK on `ground`,
    /// its fused pass walking by `walk`, its passes compiled with layers when `layers`.
    pub(super) async fn with_pages(
        device: &wgpu::Device,
        gpu_library: Arc<GpuLibrary>,
        max_instances: u32,
        layout: &[(u32, u32)],
        options: PageOptions,
        (ground, (walk, threads), layers): (Option<&'static str>, (HierarchyWalk, CharacterThreads), bool),
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
        let layer_defs_size = u64::from(MAX_LAYER_DEFS) * size_of::<GpuLayerDef>() as u64;
        let layer_def_buffer = super::wgpu_util::uniform_buffer(device, "wgpu-anim layer definitions", layer_defs_size);
        let stages = Stage::staged(gpu_library.library().has_ik(), options.culling);
        // The code of features no character of this animator can use is left out.
        let mut defs: Vec<crate::shaders::ShaderDef> = Vec::new();
        let on = naga_oil::compose::ShaderDefValue::Bool(true);
        if !layers {
            defs.push(("NO_LAYERS", on));
        }
        if !options.inertialization {
            defs.push(("NO_INERTIA", on));
        }
        if !options.dual_quaternion {
            defs.push(("NO_DUAL_QUATERNION", on));
        }
        if !options.lod_interpolation {
            defs.push(("NO_LOD_INTERPOLATION", on));
        }
        // A CPU adapter runs a workgroup's SIMD groups one after another: one SIMD group each.
        let cpu = device.adapter_info().device_type == wgpu::DeviceType::Cpu;
        let character_threads = match threads {
            CharacterThreads::Auto if cpu => CharacterThreads::One,
            CharacterThreads::Auto => CharacterThreads::Wide,
            threads => threads,
        };
        if matches!(character_threads, CharacterThreads::Narrow | CharacterThreads::One) {
            defs.push(("NARROW_THREADS", on));
        }
        if character_threads == CharacterThreads::One {
            defs.push((THREAD_PER_CHARACTER, on));
        }
        let mut passes = Vec::with_capacity(stages.len());
        for stage in stages {
            passes.push(stage_pipeline(device, &gpu_library, stage, ground, &defs).await?);
        }
        // The fused path needs its workgroup memory (within WebGPU's default) and skeletons small
        // enough for it; elsewhere only the staged path exists.
        let hierarchy_walk = match walk {
            HierarchyWalk::Auto if cpu => HierarchyWalk::OneThread,
            HierarchyWalk::Auto => HierarchyWalk::Levels,
            walk => walk,
        };
        let fused = if limits.max_compute_workgroup_storage_size >= FUSED_WORKGROUP_BYTES && largest <= MAX_FUSED_JOINTS
        {
            if hierarchy_walk == HierarchyWalk::OneThread {
                defs.push(("ONE_THREAD_WALK", on));
            }
            Some(stage_pipeline(device, &gpu_library, Stage::Fused, ground, &defs).await?)
        } else {
            None
        };
        // Buffers the device cannot allocate are an error, not a panic of its error handler.
        let scope = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        // One uniform buffer holds every page's frame, each in a slot aligned for binding at an
        // offset, so that a frame writes it once however many pages there are.
        let frame_size = size_of::<GpuFrame>() as u64;
        let frame_stride = frame_size.next_multiple_of(u64::from(limits.min_uniform_buffer_offset_alignment));
        let watches = Watches::new(device);
        let frame_buffer =
            super::wgpu_util::uniform_buffer(device, "wgpu-anim frames", frame_stride * layout.len() as u64);
        let options = PageOptions {
            sockets: gpu_library.library().has_sockets(),
            ..options
        };
        let mut pages: Vec<Page> = layout
            .iter()
            .enumerate()
            .map(|(k, &(instances, joints))| Page::new(device, k, instances, joints, options))
            .collect();
        for (k, page) in pages.iter_mut().enumerate() {
            let shared = Shared {
                library: &gpu_library,
                frame: frame_slot(&frame_buffer, frame_stride, k),
                layer_defs: &layer_def_buffer,
                event_log: watches.event_log(),
            };
            page.bind(device, k, &shared, &passes, fused.as_ref());
        }
        if let Some(e) = scope.pop().await {
            return Err(Error::Limit {
                what: format!(
                    "{} pages for {max_instances} instances and {} joints could not be allocated: {e}",
                    pages.len(),
                    layout.iter().map(|&(_, j)| u64::from(j)).sum::<u64>()
                ),
            });
        }
        let mut controller = Controller::new(gpu_library.library_arc().clone(), max_instances, layout)?;
        controller.keep_dual_quaternions(options.dual_quaternion);
        controller.keep_morph_weights(options.morph_weights);
        controller.keep_velocities(options.inertialization);
        controller.allow_layers(layers);
        controller.keep_culling(options.culling, options.lod_interpolation);
        Ok(Self {
            controller,
            gpu_library,
            max_workgroups: limits.max_compute_workgroups_per_dimension,
            layer_def_buffer,
            frame_bytes: vec![0; frame_buffer.size() as usize],
            frame_buffer,
            frame_stride,
            ground,
            walk: (walk, hierarchy_walk),
            threads: (threads, character_threads),
            pages,
            passes,
            fused,
            use_fused: false,
            poses_left: AtomicBool::new(false),
            uploaded: 0,
            previous_copy: PreviousCopy::Off,
            previous_prepared: false,
            frames: 0,
            encodes: AtomicU32::new(0),
            recovery: RecoveryState::default(),
            spare_upload: FrameUpload::default(),
            watches,
        })
    }
}

// Every instance's state on the CPU (the controller), and the library on the GPU.
impl Animator {
    /// Every instance's state on the CPU: its instances, clips, layers, IK goals and pages.
    #[must_use]
    pub fn controller(&self) -> &Controller {
        &self.controller
    }

    /// Every instance's state on the CPU, to change: anything a [`Controller`] offers (add or
    /// remove instances, play clips, set layers, IK goals, transforms, ...) is safe to change
    /// through it, and the next [`Animator::prepare`] uploads what changed.
    #[must_use]
    pub fn controller_mut(&mut self) -> &mut Controller {
        &mut self.controller
    }

    /// The library on the GPU (to share with another animator, [`Animator::with_library`]).
    #[must_use]
    pub fn gpu_library(&self) -> &Arc<GpuLibrary> {
        &self.gpu_library
    }
}

// Per frame: `prepare` uploads what changed, `encode` records the passes.
impl Animator {
    /// Uploads this frame's `dt` and whatever instance data and layer definitions changed since
    /// the last call ([`Controller::begin_frame`]). An ordinary frame, with no instance changed,
    /// makes one write: the frame uniforms of the pages in use (192 bytes each, in slots of the
    /// device's uniform offset alignment, 256 bytes by default).
    pub fn prepare(&mut self, queue: &wgpu::Queue, dt: f32) {
        let mut upload = std::mem::take(&mut self.spare_upload);
        let encodes = self.encodes.swap(0, Ordering::Relaxed);
        // The last frame's poses are in the buffer if its passes left them there.
        self.controller
            .set_last_poses_kept(self.poses_left.swap(false, Ordering::Relaxed));
        self.controller.begin_frame_into(dt, &mut upload);
        if self.previous_copy != PreviousCopy::Off {
            // The first frame after keeping began copies after its passes, the others before.
            if self.previous_prepared {
                self.previous_copy = PreviousCopy::Before;
            }
            self.previous_prepared = true;
        }
        self.uploaded = self.write_upload(queue, &upload);
        self.frames += 1;
        self.watches.begin_frame(self.frames, encodes > 0);
        if let Some(upload) = self
            .recovery
            .next_frame(encodes, upload, self.use_fused, &self.controller)
        {
            self.spare_upload = upload;
        }
    }

    /// Records the frame's passes — clock, sample, local_to_model, ik (when the library has IK
    /// chains), palette; or the clock and the fused pass — into `encoder`.
    /// With previous palettes kept ([`Animator::keep_previous_palettes`]), also the copy of
    /// each page's palettes in use into its previous palettes.
    ///
    /// Errors (nothing recorded): before the first [`Animator::prepare`]
    /// ([`Error::NotPrepared`]): no instance is on the GPU yet, and the passes would animate
    /// nothing.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder) -> Result<()> {
        self.encode_timed(encoder, None)
    }

    /// As [`Animator::encode`], writing timestamps around each pass (pass `k` is stage `k` of
    /// [`Stage::staged`] for the library, the fused pass pass 0) when a timer is given; passes
    /// past the timer's count are not timed.
    ///
    /// Errors: as [`Animator::encode`].
    pub fn encode_timed(&self, encoder: &mut wgpu::CommandEncoder, timer: Option<&PassTimer>) -> Result<()> {
        self.check_prepared(|| "Animator::encode".to_owned())?;
        self.encodes.fetch_add(1, Ordering::Relaxed);
        if self.previous_copy == PreviousCopy::Before {
            self.copy_previous_palettes(encoder);
        }
        let in_use = self.controller.pages_in_use();
        self.encode_passes(encoder, timer, self.use_fused, in_use, None, |page| {
            self.controller.page_range(page).len() as u32
        });
        if self.previous_copy == PreviousCopy::After {
            self.copy_previous_palettes(encoder);
        }
        self.watches.copy_to_ring(encoder, &self.pages);
        self.recovery.copy_checkpoint(encoder, &self.pages);
        Ok(())
    }

    /// The number of the frame last prepared (frames count from 1; 0 before the first).
    #[must_use]
    pub fn frame(&self) -> u64 {
        self.frames
    }

    /// Bytes the last [`Animator::prepare`] wrote to the GPU (frame uniforms, instances, clocks,
    /// layer definitions).
    #[must_use]
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded
    }

    /// The frame uniform the last [`Animator::prepare`] wrote for page `page` (what its stages
    /// read this frame: its flags, view planes and LOD thresholds), for tests and tools that
    /// run the CPU mirror on the same frame; `None` for a page that does not exist.
    #[must_use]
    pub fn frame_uniform(&self, page: usize) -> Option<GpuFrame> {
        let at = page.checked_mul(self.frame_stride as usize)?;
        let bytes = self.frame_bytes.get(at..at + size_of::<GpuFrame>())?;
        Some(bytemuck::pod_read_unaligned(bytes))
    }

    /// Writes what `upload` says changed; returns the bytes written.
    pub(super) fn write_upload(&mut self, queue: &wgpu::Queue, upload: &FrameUpload) -> u64 {
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
                self.pages[*page].buffer(Resource::Instances),
                (first * size_of::<GpuInstance>()) as u64,
                bytemuck::cast_slice(instances),
            );
        }
        for (page, first, clocks) in &upload.clocks {
            queue.write_buffer(
                self.pages[*page].buffer(Resource::CharacterState),
                (first * size_of::<GpuClock>()) as u64,
                bytemuck::cast_slice(clocks),
            );
        }
        for write in &upload.sections {
            queue.write_buffer(
                self.pages[write.page].buffer(write.resource),
                write.offset,
                bytemuck::cast_slice(&write.words),
            );
        }
        // The frame uniforms go up with the gaps between their slots.
        let frames_counted = (upload.frames.len() * size_of::<GpuFrame>()) as u64;
        upload.bytes() - frames_counted + frame_end as u64
    }

    /// Records the passes of a frame of `in_use` pages, page `k` with `count(k)` instances, on
    /// the fused path if `fused` (and it is available); with `only`, that stage's pass alone.
    pub(super) fn encode_passes(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        timer: Option<&PassTimer>,
        fused: bool,
        in_use: usize,
        only: Option<Stage>,
        count: impl Fn(usize) -> u32,
    ) {
        if self.watches.event_capacity() > 0 && in_use > 0 {
            // This frame's log starts empty: its count and overflow (records past the count
            // are never read).
            encoder.clear_buffer(self.watches.event_log(), 0, Some(size_of::<GpuEventLogHead>() as u64));
        }
        let fused = self.fused.as_ref().filter(|_| fused);
        // The frame's passes, each with the index of its bind groups in the pages: the staged
        // ones, or the clock, the fused one and then the cull pass (which lists the characters
        // it evaluated for a culled draw). Chained iterators: a frame allocates nothing.
        let staged = self.passes.iter().zip(0..).filter(|_| fused.is_none());
        let of_stage = |stage: Stage| {
            self.passes
                .iter()
                .zip(0..)
                .filter(move |(p, _)| fused.is_some() && p.stage == stage)
        };
        let fused_passes = of_stage(Stage::Clock)
            .chain(fused.map(|f| (f, usize::MAX)))
            .chain(of_stage(Stage::Cull));
        let culling = self.controller.culling();
        for (k, (pass, bind_index)) in fused_passes.chain(staged).enumerate() {
            // One pass per stage, each page a dispatch in it; timestamps around the pass.
            if in_use == 0 {
                return;
            }
            if only.is_some_and(|s| s != pass.stage) {
                continue;
            }
            match pass.stage {
                Stage::Sample => self.poses_left.store(true, Ordering::Relaxed),
                Stage::Fused => self.poses_left.store(false, Ordering::Relaxed),
                _ => {}
            }
            let mut cpass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(pass.stage.name()),
                timestamp_writes: timer.and_then(|t| t.compute_writes(k as u32)),
            });
            cpass.set_pipeline(&pass.pipeline);
            for (k_page, page) in self.pages.iter().enumerate().take(in_use) {
                let bind_group = match pass.stage {
                    Stage::Fused => page.fused_bind_group.as_ref().expect("made with the fused pipeline"),
                    _ => &page.bind_groups[bind_index],
                };
                cpass.set_bind_group(0, bind_group, &[]);
                let n = count(k_page);
                // Workgroups of characters: one each, or one per thread (CharacterThreads::One).
                let characters = n.div_ceil(pass.characters_per_workgroup);
                let (groups, listed) = match pass.stage {
                    // One workgroup per page.
                    Stage::Cull => (1, None),
                    // A workgroup per instance (or per eight), threads over joints (or a thread
                    // each); with culling, per listed instance (the cull pass wrote the arguments).
                    Stage::Sample | Stage::Ik => (characters, Some(0)),
                    // With interpolating LOD, per drawn instance (evaluated or interpolated).
                    Stage::Palette => (
                        characters,
                        Some(if self.controller.lod_interpolation() { 48 } else { 0 }),
                    ),
                    Stage::Fused => (characters, None),
                    // One thread per instance (or per listed instance).
                    Stage::LocalToModel => (n.div_ceil(WORKGROUP_SIZE), Some(16)),
                    _ => (n.div_ceil(WORKGROUP_SIZE), None),
                };
                match listed.filter(|_| culling) {
                    Some(offset) => cpass.dispatch_workgroups_indirect(page.buffer(Resource::Visible), offset),
                    None => {
                        let (x, y) = split_dispatch(groups, self.max_workgroups);
                        cpass.dispatch_workgroups(x, y, 1);
                    }
                }
            }
        }
    }

    /// Remakes every page's bind groups (after the event log changed).
    pub(super) fn bind_pages(&mut self, device: &wgpu::Device) {
        for (k, page) in self.pages.iter_mut().enumerate() {
            let shared = Shared {
                library: &self.gpu_library,
                frame: frame_slot(&self.frame_buffer, self.frame_stride, k),
                layer_defs: &self.layer_def_buffer,
                event_log: self.watches.event_log(),
            };
            page.bind(device, k, &shared, &self.passes, self.fused.as_ref());
        }
    }

    /// Errors ([`Error::NotPrepared`], naming `what`) before the first [`Animator::prepare`].
    pub(crate) fn check_prepared(&self, what: impl FnOnce() -> String) -> Result<()> {
        if self.frames == 0 {
            return Err(Error::NotPrepared { what: what() });
        }
        Ok(())
    }

    /// [`Animator::check_prepared`] for a draw of `instances`, and [`Error::NotUploaded`] when
    /// some of them were added after the last [`Animator::prepare`].
    pub(crate) fn check_drawable(&self, instances: std::ops::Range<usize>, what: impl Fn() -> String) -> Result<()> {
        self.check_prepared(&what)?;
        // Past the animator's instances a draw draws nothing: only those it has count.
        let end = instances.end.min(self.controller.instance_count());
        let uploaded = self.controller.uploaded_instances();
        if end > uploaded && instances.start < end {
            return Err(Error::NotUploaded {
                what: what(),
                prepared: uploaded.max(instances.start),
                end,
            });
        }
        Ok(())
    }
}

// The path a frame takes on this device (fused or staged, threads, walk) and its passes, for
// choosing and profiling.
impl Animator {
    /// Chooses the fused path (two dispatches per page: the clock, then the other stages in one,
    /// the pose kept in workgroup memory; model matrices and local poses not written, only the
    /// pose history) or the staged one (a dispatch per stage, every stage's buffer written). Errors
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

    /// Whether this animator can run the fused path (the clock, then the rest in one dispatch):
    /// skeletons of at most [`MAX_FUSED_JOINTS`] joints (its bindings and workgroup memory fit
    /// WebGPU's defaults).
    #[must_use]
    pub fn fused_available(&self) -> bool {
        self.fused.is_some()
    }

    /// How many threads work on each character in the passes that run a workgroup per character
    /// ([`AnimatorDesc::character_threads`], with [`CharacterThreads::Auto`] decided).
    #[must_use]
    pub fn character_threads(&self) -> CharacterThreads {
        self.threads.1
    }

    /// How many threads work on each character in the fused pass: the animator's
    /// ([`Animator::character_threads`]), in every variant (each fits WebGPU's default storage
    /// buffers per stage with two to spare, [`crate::shaders::STORAGE_SLOTS_SPARE`]). `None`
    /// without a fused pass ([`Animator::fused_available`]).
    #[must_use]
    pub fn fused_character_threads(&self) -> Option<CharacterThreads> {
        self.fused.as_ref().map(|_| self.threads.1)
    }

    /// How the fused pass walks each character's hierarchy on this device
    /// ([`AnimatorDesc::hierarchy_walk`], with [`HierarchyWalk::Auto`] decided).
    #[must_use]
    pub fn hierarchy_walk(&self) -> HierarchyWalk {
        self.walk.1
    }

    /// The passes a frame records, in order: [`Stage::staged`] for the library, or on the fused
    /// path [`Stage::Clock`] and [`Stage::Fused`], followed by [`Stage::Cull`] with culling (pass
    /// `k` of [`Animator::encode_timed`]'s timer).
    #[must_use]
    pub fn passes(&self) -> Vec<Stage> {
        let staged = self.passes.iter().map(|p| p.stage);
        if self.use_fused {
            [Stage::Clock, Stage::Fused]
                .into_iter()
                .chain(staged.filter(|&s| s == Stage::Cull))
                .collect()
        } else {
            staged.collect()
        }
    }

    /// Dispatches per frame and page: one per stage (two on the fused path; with culling, one
    /// more for the cull pass), whatever the number of instances.
    #[must_use]
    pub fn dispatches_per_page(&self) -> u32 {
        self.passes().len() as u32
    }

    /// Dispatches per frame: [`Animator::dispatches_per_page`] for every page in use.
    #[must_use]
    pub fn dispatches_per_frame(&self) -> u32 {
        self.dispatches_per_page() * self.controller.pages_in_use() as u32
    }

    /// What the animator's pipeline of `stage` binds: the entries of [`Stage::bindings`] its
    /// shader variant uses ([`crate::shaders::StageVariant::bindings`]), so that a feature the
    /// animator leaves out (dual quaternions, morph targets) costs no binding; `None` for a stage
    /// it has no pipeline of.
    #[must_use]
    pub fn stage_bindings(&self, stage: Stage) -> Option<&[(Resource, crate::shaders::Access)]> {
        self.passes
            .iter()
            .chain(&self.fused)
            .find(|p| p.stage == stage)
            .map(|p| p.bindings.as_slice())
    }

    /// Records one stage's pass alone over every page in use: [`Stage::Clock`], [`Stage::Sample`],
    /// [`Stage::LocalToModel`], [`Stage::Ik`] (when the library has IK chains; else nothing),
    /// [`Stage::Palette`], or [`Stage::Fused`] where the device has the fused pass. For profiling a pass on its own (`wgpu-anim cost` repeats each one): a frame is
    /// [`Animator::encode`], as a stage reads what the stage before it wrote.
    ///
    /// Errors: [`Error::Limit`] for [`Stage::Skin`] (the renderer draws it), or for
    /// [`Stage::Fused`] where the fused pass is not available ([`Animator::fused_available`]);
    /// before the first [`Animator::prepare`], [`Error::NotPrepared`].
    pub fn encode_stage(&self, encoder: &mut wgpu::CommandEncoder, stage: Stage) -> Result<()> {
        let fused = stage == Stage::Fused;
        if stage == Stage::Skin || (fused && self.fused.is_none()) {
            return Err(Error::Limit {
                what: format!("the {} pass cannot be recorded by the animator here", stage.name()),
            });
        }
        self.check_prepared(|| format!("Animator::encode_stage of the {} pass", stage.name()))?;
        let in_use = self.controller.pages_in_use();
        self.encode_passes(encoder, None, fused, in_use, Some(stage), |page| {
            self.controller.page_range(page).len() as u32
        });
        Ok(())
    }
}

// Buffers a renderer or a pass of its own binds (the pages' buffers: `inspect.rs`).
impl Animator {
    /// Keeps (or stops keeping) each page's previous-frame palettes, for motion vectors: a
    /// buffer per page beside the palettes ([`Animator::page_previous_palette_buffer`]) that every
    /// frame's [`Animator::encode`] fills with the palettes before its passes overwrite them (a
    /// copy of the joints in use). On the first frame after this call it holds that frame's own
    /// palettes (no motion); an instance added since the last frame has no previous pose, and
    /// its previous palettes are whatever its joints held. With dual quaternions kept
    /// ([`super::AnimatorDesc::dual_quaternion`]), last frame's dual quaternions are kept the same
    /// way ([`Animator::page_previous_dual_palette_buffer`]); an instance that skins with them
    /// since this frame only has whatever its joints' previous dual quaternions held. Off by
    /// default: no buffer, no copy.
    ///
    /// Errors: buffers the device refuses ([`Error::Refused`]); then nothing changes.
    pub fn keep_previous_palettes(&mut self, device: &wgpu::Device, keep: bool) -> Result<()> {
        if !keep {
            for page in &mut self.pages {
                page.previous_palette = None;
                page.previous_dual = None;
            }
            self.previous_copy = PreviousCopy::Off;
            return Ok(());
        }
        if self.previous_copy != PreviousCopy::Off {
            return Ok(());
        }
        let dual = self.controller.dual_quaternion();
        let buffers = super::refusable_now(
            device,
            || "the previous palettes".to_owned(),
            || {
                let copy = |k: usize, page: &Page, resource: Resource| {
                    device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(&format!("wgpu-anim page {k} previous {}", resource.name())),
                        // A section's bytes (the dual quaternions'), or the whole buffer.
                        size: page.place(resource).1.max(size_of::<crate::math::DualQuat>() as u64),
                        usage: page.buffer(resource).usage(),
                        mapped_at_creation: false,
                    })
                };
                self.pages
                    .iter()
                    .enumerate()
                    .map(|(k, page)| {
                        let previous_dual = dual.then(|| copy(k, page, Resource::DualPalettes));
                        (copy(k, page, Resource::Palettes), previous_dual)
                    })
                    .collect::<Vec<_>>()
            },
        )?;
        for (page, (palette, dual)) in self.pages.iter_mut().zip(buffers) {
            page.previous_palette = Some(palette);
            page.previous_dual = dual;
        }
        self.previous_copy = PreviousCopy::After;
        self.previous_prepared = false;
        Ok(())
    }

    /// The layer definition uniform ([`Controller::layer_defs`](super::Controller::layer_defs), room for [`MAX_LAYER_DEFS`](crate::layout::MAX_LAYER_DEFS)).
    #[must_use]
    pub fn layer_def_buffer(&self) -> &wgpu::Buffer {
        &self.layer_def_buffer
    }
}

// What the `impl Animator` blocks of other files of `gpu` read and change: each group of state
// through its owner's methods (the watches in `read_back/watch.rs`, recovery in `recovery.rs`).
impl Animator {
    /// The pages, in order.
    pub(super) fn pages(&self) -> &[Page] {
        &self.pages
    }

    /// What is read back every frame.
    pub(super) fn watches(&self) -> &Watches {
        &self.watches
    }

    /// What is read back every frame, to change.
    pub(super) fn watches_mut(&mut self) -> &mut Watches {
        &mut self.watches
    }

    /// What is kept to rebuild on a new device.
    pub(super) fn recovery_state(&self) -> &RecoveryState {
        &self.recovery
    }

    /// What is kept to rebuild on a new device, to change.
    pub(super) fn recovery_state_mut(&mut self) -> &mut RecoveryState {
        &mut self.recovery
    }

    /// The ground function, walk and threads per character as asked for, as
    /// [`Animator::with_pages`] takes them (a rebuild asks for the same).
    pub(super) fn asked(&self) -> (Option<&'static str>, (HierarchyWalk, CharacterThreads)) {
        (self.ground, (self.walk.0, self.threads.0))
    }

    /// Times the passes were encoded since the last prepare.
    pub(super) fn encodes_since_prepare(&self) -> u32 {
        self.encodes.load(Ordering::Relaxed)
    }

    /// Continues from where `old` was after a rebuild replayed its frames here: its controller,
    /// its path (if this device has it), where its poses are, its frame count and its last
    /// frame's encodes.
    pub(super) fn continue_from(&mut self, old: &Animator) {
        self.controller = old.controller.clone();
        self.use_fused = old.use_fused && self.fused.is_some();
        // The replay left the last frame's poses where this animator's frame did (a checkpoint
        // keeps the poses of its frame: Survival::PosesCheckpointed).
        self.poses_left
            .store(old.poses_left.load(Ordering::Relaxed), Ordering::Relaxed);
        self.frames = old.frames;
        // The last frame's encodes, which its log entry takes at the next prepare.
        self.encodes
            .store(old.encodes.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}
