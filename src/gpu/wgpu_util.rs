//! The wgpu descriptors the crate builds again and again, built in one place: bind group layout
//! entries of buffers, the uniform buffers the queue writes, and the render pipelines of meshes
//! (the skinned and prop renderers', the ground's, the footprints').

/// The layout entry of a buffer at `binding` seen by `visibility`, of type `ty`, without dynamic
/// offset, at least `min_size` bytes (0: any size).
pub(crate) fn buffer_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    ty: wgpu::BufferBindingType,
    min_size: u64,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: false,
            min_binding_size: wgpu::BufferSize::new(min_size),
        },
        count: None,
    }
}

/// The layout entry of a uniform buffer ([`buffer_entry`]).
pub(crate) fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages, min_size: u64) -> wgpu::BindGroupLayoutEntry {
    buffer_entry(binding, visibility, wgpu::BufferBindingType::Uniform, min_size)
}

/// The layout entry of a storage buffer, read-only or not ([`buffer_entry`]).
pub(crate) fn storage_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    read_only: bool,
    min_size: u64,
) -> wgpu::BindGroupLayoutEntry {
    buffer_entry(
        binding,
        visibility,
        wgpu::BufferBindingType::Storage { read_only },
        min_size,
    )
}

/// A uniform buffer of `size` bytes that the queue writes (`UNIFORM | COPY_DST`), not mapped.
pub(crate) fn uniform_buffer(device: &wgpu::Device, label: &str, size: u64) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A uniform buffer holding `contents`, which the queue does not write (`UNIFORM` alone).
pub(crate) fn uniform_buffer_init(device: &wgpu::Device, label: &str, contents: &[u8]) -> wgpu::Buffer {
    wgpu::util::DeviceExt::create_buffer_init(
        device,
        &wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: wgpu::BufferUsages::UNIFORM,
        },
    )
}

/// Depth testing of the built-in pipelines (write, pass when nearer), for a pipeline of yours that
/// draws into the same depth buffer.
#[must_use]
pub fn depth_state(format: wgpu::TextureFormat) -> wgpu::DepthStencilState {
    wgpu::DepthStencilState {
        format,
        depth_write_enabled: Some(true),
        depth_compare: Some(wgpu::CompareFunction::Less),
        stencil: Default::default(),
        bias: Default::default(),
    }
}

/// Where a mesh pipeline draws: the color format, an optional depth format, the MSAA count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MeshTargets {
    /// The colour target's format.
    pub color_format: wgpu::TextureFormat,
    /// The depth buffer's format, if there is one.
    pub depth_format: Option<wgpu::TextureFormat>,
    /// The MSAA sample count.
    pub sample_count: u32,
}

impl MeshTargets {
    /// Drawing into `color_format`, with depth in `depth_format` if any, `sample_count` samples.
    pub(crate) const fn new(
        color_format: wgpu::TextureFormat,
        depth_format: Option<wgpu::TextureFormat>,
        sample_count: u32,
    ) -> Self {
        Self {
            color_format,
            depth_format,
            sample_count,
        }
    }
}

/// What differs between the crate's render pipelines of triangle lists ([`MeshPipeline::build`]).
pub(crate) struct MeshPipeline<'a> {
    /// The pipeline's label.
    pub label: &'a str,
    /// Its layout; `None` derives one from the shader.
    pub layout: Option<&'a wgpu::PipelineLayout>,
    /// The shader module.
    pub module: &'a wgpu::ShaderModule,
    /// The module's vertex and fragment entry points.
    pub entry_points: [&'a str; 2],
    /// Pipeline-overridable constants, given to both stages.
    pub constants: &'a [(&'a str, f64)],
    /// The vertex buffers' layouts.
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    /// How the colour blends into the target (`None`: it replaces it).
    pub blend: Option<wgpu::BlendState>,
    /// Whether it writes depth; it tests it as [`depth_state`] does when there is depth.
    pub depth_write: bool,
    /// The faces not drawn.
    pub cull_mode: Option<wgpu::Face>,
}

impl<'a> MeshPipeline<'a> {
    /// The pipeline `label` of `module`'s `entry_points` (vertex, fragment) in the layout the
    /// shader implies: no vertex buffers or constants, opaque, depth written, no face culled.
    pub(crate) fn new(label: &'a str, module: &'a wgpu::ShaderModule, entry_points: [&'a str; 2]) -> Self {
        Self {
            label,
            layout: None,
            module,
            entry_points,
            constants: &[],
            buffers: &[],
            blend: None,
            depth_write: true,
            cull_mode: None,
        }
    }

    /// The pipeline, drawing into `targets` (all colour channels written).
    pub(crate) fn build(&self, device: &wgpu::Device, targets: MeshTargets) -> wgpu::RenderPipeline {
        let [vertex, fragment] = self.entry_points;
        let compilation_options = || wgpu::PipelineCompilationOptions {
            constants: self.constants,
            ..Default::default()
        };
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(self.label),
            layout: self.layout,
            vertex: wgpu::VertexState {
                module: self.module,
                entry_point: Some(vertex),
                compilation_options: compilation_options(),
                buffers: self.buffers,
            },
            fragment: Some(wgpu::FragmentState {
                module: self.module,
                entry_point: Some(fragment),
                compilation_options: compilation_options(),
                targets: &[Some(wgpu::ColorTargetState {
                    format: targets.color_format,
                    blend: self.blend,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            primitive: wgpu::PrimitiveState {
                cull_mode: self.cull_mode,
                ..Default::default()
            },
            depth_stencil: targets.depth_format.map(|format| wgpu::DepthStencilState {
                depth_write_enabled: Some(self.depth_write),
                ..depth_state(format)
            }),
            multisample: wgpu::MultisampleState {
                count: targets.sample_count,
                ..Default::default()
            },
            multiview_mask: None,
            cache: None,
        })
    }
}

/// A render pipeline of triangle lists from `module`'s vertex entry point `vertex` and
/// `fs_main`, back faces culled, opaque, with [`depth_state`] when there is depth: the built-in
/// renderers' pipelines.
pub(crate) fn mesh_pipeline(
    device: &wgpu::Device,
    label: &str,
    (module, vertex): (&wgpu::ShaderModule, &str),
    layout: &wgpu::PipelineLayout,
    buffers: &[Option<wgpu::VertexBufferLayout<'_>>],
    targets: MeshTargets,
) -> wgpu::RenderPipeline {
    MeshPipeline {
        layout: Some(layout),
        buffers,
        cull_mode: Some(wgpu::Face::Back),
        ..MeshPipeline::new(label, module, [vertex, "fs_main"])
    }
    .build(device, targets)
}

/// The shader module `label` of WGSL `source`.
pub(crate) fn wgsl_module(device: &wgpu::Device, label: &str, source: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// The pipeline layout `label` of the one bind group layout `group` (group 0), with no immediates.
pub(crate) fn pipeline_layout(
    device: &wgpu::Device,
    label: &str,
    group: &wgpu::BindGroupLayout,
) -> wgpu::PipelineLayout {
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(group)],
        immediate_size: 0,
    })
}
