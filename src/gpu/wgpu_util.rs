//! The wgpu descriptors the crate builds again and again, built in one place: bind group layout
//! entries of buffers, the uniform buffers the queue writes, and the render pipelines of meshes.

/// The layout entry of a buffer at `binding` seen by `visibility`, of type `ty`, without dynamic
/// offset, at least `min_size` bytes (0: any size).
fn buffer_entry(
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
