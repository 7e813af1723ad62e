//! [`Footprints`]: marks on the ground where feet land, made on the GPU from the animator's event
//! log ([`Animator::watch_events`]) and the feet's socket matrices — an example of a consumer of
//! events that never leaves the GPU (`shaders/footprints.wgsl`, drawn by
//! `shaders/footprint_marks.wgsl`).

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;
use crate::gpu::wgpu_util::{MeshPipeline, MeshTargets, uniform_buffer, wgsl_module};
use crate::gpu::{Animator, Camera};
use crate::layout::wgsl::wgsl_struct;
use crate::layout::{MAX_SOCKETS, WgslStruct};
use wgpu::util::DeviceExt;

wgsl_struct! {
    /// The compute pass's per-page uniform. WGSL `Params`, whose declaration is made from this one
    /// and prepended to `shaders/footprints.wgsl` ([`footprints_source`]).
    #[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
    struct Params as "Params" {
        /// Seconds, the marks' clock.
        time: f32,
        /// The page's first character.
        first: u32,
        /// The page's characters.
        count: u32,
        /// Where the page's socket matrices start in its palette buffer (its joint capacity).
        socket_base: u32,
        /// The left foot-down event.
        event_l: u32,
        /// The right foot-down event.
        event_r: u32,
        /// The socket at the left sole.
        socket_l: u32,
        /// The socket at the right sole.
        socket_r: u32,
        /// 1 when the animator culls: a character the frame did not evaluate leaves no mark (its
        /// socket matrices are of its last evaluated frame).
        culling: u32,
        /// Padding (scalars, not an array: a uniform's arrays take 16 bytes per element).
        _pad_a: u32,
        /// Padding.
        _pad_b: u32,
        /// Padding.
        _pad_c: u32,
    }
}

/// The compute pass's shader as it is composed with the shared types: [`Params`]'s WGSL, then
/// `shaders/footprints.wgsl`.
fn footprints_source() -> String {
    format!(
        "{}\n{}",
        Params::declaration(),
        include_str!("../../../shaders/footprints.wgsl")
    )
}

/// Bytes of a mark (WGSL `Mark`): position and landing time, direction and side.
const MARK_BYTES: u64 = 32;
/// Bytes of the ring's head (its counter) before the marks.
const HEAD_BYTES: u64 = 16;

/// Footprints: each frame a compute pass reads the foot-down events of the animator's event log
/// and, for each, the landing foot's socket matrix, and stamps a mark — where and when the sole
/// landed, and which way the foot points — into a ring of `capacity` marks on the GPU, the oldest
/// overwritten first. Draw them with a [`FootprintRenderer`]. Record
/// [`Footprints::encode`] after the animator's passes of the frame, which must watch events
/// ([`Animator::watch_events`]) and whose skeletons have the two sole sockets.
pub struct Footprints {
    pipeline: wgpu::ComputePipeline,
    /// Per page: its uniform and bind group.
    pages: Vec<(wgpu::Buffer, wgpu::BindGroup)>,
    marks: wgpu::Buffer,
    capacity: u32,
    event_capacity: u32,
    events: [u32; 2],
    sockets: [u32; 2],
}

impl Footprints {
    blocking! {
        /// [`Footprints::new_async`], blocking (native only).
        ///
        /// Errors: as [`Footprints::new_async`].
        pub fn new(
            device: &wgpu::Device,
            animator: &Animator,
            events: [u32; 2],
            sockets: [usize; 2],
            capacity: u32,
        ) -> Result<Self> = Self::new_async;
    }

    /// Footprints of `animator`'s characters for the left and right foot-down events `events`
    /// (numbers of the library's [`event_names`](crate::AnimationLibrary::event_names)) at the
    /// sole sockets `sockets`, in a ring of `capacity` marks.
    ///
    /// It waits for the device's answer to the error scopes around its buffers and pipeline, so
    /// it is `async`: in a browser, `.await` it; natively, [`Footprints::new`] blocks on it.
    ///
    /// Errors: the animator does not watch events; buffers or a pipeline the device refuses.
    pub async fn new_async(
        device: &wgpu::Device,
        animator: &Animator,
        events: [u32; 2],
        sockets: [usize; 2],
        capacity: u32,
    ) -> Result<Self> {
        if animator.event_capacity() == 0 {
            return Err(Error::Limit {
                what: "footprints need an animator that watches events (Animator::watch_events)".into(),
            });
        }
        if sockets.iter().any(|&s| s >= MAX_SOCKETS as usize) {
            return Err(Error::Limit {
                what: format!("footprint sockets {sockets:?}: a skeleton has at most {MAX_SOCKETS}"),
            });
        }
        let capacity = capacity.max(1);
        crate::gpu::refusable(
            device,
            || "the footprints".to_owned(),
            || {
                // The event record and the socket count are the stages' own (shared types).
                let source = crate::shaders::compose_with_shared(&footprints_source(), "footprints")
                    .unwrap_or_else(|e| panic!("the crate's shaders compose: {e}"));
                let module = wgsl_module(device, "wgpu-anim footprints", &source);
                let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some("wgpu-anim footprints"),
                    layout: None,
                    module: &module,
                    entry_point: Some("stamp"),
                    compilation_options: Default::default(),
                    cache: None,
                });
                // Marks landed "long ago": invisible until stamped.
                let mut bytes = vec![0u8; (HEAD_BYTES + u64::from(capacity) * MARK_BYTES) as usize];
                for mark in bytes[HEAD_BYTES as usize..].chunks_exact_mut(MARK_BYTES as usize) {
                    mark[12..16].copy_from_slice(&(-1.0e9f32).to_le_bytes());
                }
                let marks = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim footprint marks"),
                    contents: &bytes,
                    usage: wgpu::BufferUsages::STORAGE,
                });
                let layout = pipeline.get_bind_group_layout(0);
                let pages = (0..animator.controller().page_count())
                    .map(|page| {
                        let params = uniform_buffer(device, "wgpu-anim footprint params", size_of::<Params>() as u64);
                        let palettes = animator.page_palette_buffer(page).expect("a page of the animator");
                        let outputs = animator.page_outputs(page).expect("a page of the animator");
                        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                            label: Some("wgpu-anim footprints"),
                            layout: &layout,
                            entries: &[
                                wgpu::BindGroupEntry {
                                    binding: 0,
                                    resource: params.as_entire_binding(),
                                },
                                wgpu::BindGroupEntry {
                                    binding: 1,
                                    resource: animator.event_log_buffer().as_entire_binding(),
                                },
                                wgpu::BindGroupEntry {
                                    binding: 2,
                                    resource: palettes.as_entire_binding(),
                                },
                                wgpu::BindGroupEntry {
                                    binding: 3,
                                    resource: marks.as_entire_binding(),
                                },
                                wgpu::BindGroupEntry {
                                    binding: 4,
                                    resource: wgpu::BindingResource::Buffer(outputs),
                                },
                            ],
                        });
                        (params, group)
                    })
                    .collect();
                Self {
                    pipeline,
                    pages,
                    marks,
                    capacity,
                    event_capacity: animator.event_capacity(),
                    events,
                    sockets: sockets.map(|s| s as u32),
                }
            },
        )
        .await
    }

    /// Marks the ring holds.
    #[must_use]
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Writes this frame's page uniforms: the marks' clock `time` (seconds) and where each page's
    /// characters and socket matrices are. Call it after [`Animator::prepare`].
    pub fn update(&self, queue: &wgpu::Queue, animator: &Animator, time: f32) {
        for (page, (params, _)) in self.pages.iter().enumerate() {
            let range = animator.controller().page_range(page);
            let p = Params {
                time,
                first: range.start as u32,
                count: range.len() as u32,
                socket_base: animator.controller().page_max_joints(page),
                event_l: self.events[0],
                event_r: self.events[1],
                socket_l: self.sockets[0],
                socket_r: self.sockets[1],
                culling: u32::from(animator.controller().culling()),
                _pad_a: 0,
                _pad_b: 0,
                _pad_c: 0,
            };
            queue.write_buffer(params, 0, bytemuck::bytes_of(&p));
        }
    }

    /// Records the stamping pass: one dispatch per page in use, a thread per record of the event
    /// log. After the animator's passes.
    pub fn encode(&self, encoder: &mut wgpu::CommandEncoder, animator: &Animator) {
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("footprints"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&self.pipeline);
        for (_, group) in self.pages.iter().take(animator.controller().pages_in_use()) {
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(self.event_capacity.div_ceil(64), 1, 1);
        }
    }

    blocking! {
        /// [`Footprints::renderer_async`], blocking (native only).
        ///
        /// Errors: as [`Footprints::renderer_async`].
        pub fn renderer(
            &self,
            device: &wgpu::Device,
            color_format: wgpu::TextureFormat,
            depth_format: Option<wgpu::TextureFormat>,
            sample_count: u32,
        ) -> Result<FootprintRenderer> = Self::renderer_async;
    }

    /// A renderer of the marks into `color_format` with an optional depth buffer and MSAA
    /// `sample_count`.
    ///
    /// It waits for the device's answer to the error scopes around its buffers and pipeline, so
    /// it is `async`: in a browser, `.await` it; natively, [`Footprints::renderer`] blocks on it.
    ///
    /// Errors: a pipeline the device refuses.
    pub async fn renderer_async(
        &self,
        device: &wgpu::Device,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Result<FootprintRenderer> {
        crate::gpu::refusable(
            device,
            || "the footprint renderer".to_owned(),
            || {
                FootprintRenderer::new(
                    device,
                    &self.marks,
                    self.capacity,
                    color_format,
                    depth_format,
                    sample_count,
                )
            },
        )
        .await
    }
}

/// Draws the marks of a [`Footprints`] ring on the ground, each fading out over six seconds.
pub struct FootprintRenderer {
    pipeline: wgpu::RenderPipeline,
    bind_group: wgpu::BindGroup,
    camera: wgpu::Buffer,
    now: wgpu::Buffer,
    capacity: u32,
}

impl FootprintRenderer {
    fn new(
        device: &wgpu::Device,
        marks: &wgpu::Buffer,
        capacity: u32,
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Self {
        let camera = uniform_buffer(device, "wgpu-anim footprint camera", size_of::<Camera>() as u64);
        let now = uniform_buffer(device, "wgpu-anim footprint time", 16);
        let module = wgsl_module(
            device,
            "wgpu-anim footprint marks",
            &crate::shaders::with_camera(include_str!("../../../shaders/footprint_marks.wgsl")),
        );
        let pipeline = MeshPipeline {
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
            // Tested against the depth of what stands on the marks, not written.
            depth_write: false,
            ..MeshPipeline::new("wgpu-anim footprint marks", &module, ["vs_mark", "fs_mark"])
        }
        .build(device, MeshTargets::new(color_format, depth_format, sample_count));
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("wgpu-anim footprint marks"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: camera.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: now.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: marks.as_entire_binding(),
                },
            ],
        });
        Self {
            pipeline,
            bind_group,
            camera,
            now,
            capacity,
        }
    }

    /// Uploads the camera and the marks' clock now (the `time` given to
    /// [`Footprints::update`]).
    pub fn set_view(&self, queue: &wgpu::Queue, camera: &Camera, time: f32) {
        queue.write_buffer(&self.camera, 0, bytemuck::bytes_of(camera));
        queue.write_buffer(&self.now, 0, bytemuck::cast_slice(&[time, 0.0, 0.0, 0.0]));
    }

    /// Draws every mark (those not stamped yet or faded out are clipped away). Record it after
    /// the ground and before what stands on it.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.draw(0..6 * self.capacity, 0..1);
    }
}

#[cfg(test)]
mod tests {
    use super::{Params, footprints_source};
    use crate::layout::WgslStruct;

    /// The composed shader's `Params` is the Rust struct's: the same size, every field at the
    /// same offset (naga's layout).
    #[test]
    fn the_shader_params_have_the_rust_layout() {
        let source = crate::shaders::compose_with_shared(&footprints_source(), "footprints").unwrap();
        let (module, _) = crate::shaders::validate(&source).unwrap();
        let mut layouter = naga::proc::Layouter::default();
        layouter.update(module.to_ctx()).unwrap();
        let (handle, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Params"))
            .expect("the WGSL Params");
        let naga::TypeInner::Struct { members, .. } = &ty.inner else {
            panic!("Params is a struct");
        };
        let wgsl: Vec<(&str, usize)> = members
            .iter()
            .map(|m| (m.name.as_deref().unwrap_or_default(), m.offset as usize))
            .collect();
        assert_eq!(wgsl, Params::fields());
        assert_eq!(layouter[handle].size as usize, size_of::<Params>());
    }
}
