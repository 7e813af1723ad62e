//! [`GpuLibrary`]: an [`AnimationLibrary`] uploaded once into two storage buffers (a header heap
//! and a payload heap) plus a small uniform saying where each section starts, shared by every
//! animator that plays it.

use crate::error::{Error, Result};
use crate::layout::GpuLibraryLayout;
use crate::library::AnimationLibrary;
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// One 16-byte heap unit, as WGSL reads it (`vec4<u32>`).
type Unit = [u32; 4];

/// The library's two heaps and their layout, built on the CPU (no device needed).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LibraryHeaps {
    /// Where each section starts.
    pub layout: GpuLibraryLayout,
    /// Clips, tracks, skeletons, blend nodes, children, triangles and clip events.
    pub headers: Vec<Unit>,
    /// Key times, key values (with rest poses and masks), parents and inverse binds.
    pub payload: Vec<Unit>,
}

/// Appends `items` (each a whole number of 16-byte units) to `heap`; returns the first unit.
fn section<T: bytemuck::Pod>(heap: &mut Vec<Unit>, items: &[T]) -> u32 {
    let start = heap.len() as u32;
    heap.extend_from_slice(bytemuck::cast_slice(items));
    start
}

/// Appends 32-bit words, four per unit, the last unit padded with zeros.
fn words(heap: &mut Vec<Unit>, items: &[u32]) -> u32 {
    let start = heap.len() as u32;
    heap.extend(items.chunks(4).map(|c| {
        let mut unit = [0; 4];
        unit[..c.len()].copy_from_slice(c);
        unit
    }));
    start
}

impl LibraryHeaps {
    /// Packs `library` (the WGSL accessors in `shaders/shared/library.wgsl` read it back).
    #[must_use]
    pub fn new(library: &AnimationLibrary) -> Self {
        let mut headers = Vec::new();
        let mut payload = Vec::new();
        let blend = library.blend();
        let layout = GpuLibraryLayout {
            clips: section(&mut headers, library.clips()),
            tracks: section(&mut headers, library.tracks()),
            skeletons: section(&mut headers, library.gpu_skeletons()),
            blend_nodes: section(&mut headers, &blend.nodes),
            blend_children: section(&mut headers, &blend.children),
            blend_triangles: section(&mut headers, &blend.triangles),
            times: words(&mut payload, bytemuck::cast_slice(library.times())),
            values: section(&mut payload, library.values()),
            parents: words(&mut payload, bytemuck::cast_slice(library.parents())),
            inverse_binds: section(&mut payload, library.inverse_binds()),
            sockets: section(&mut payload, library.gpu_sockets()),
            events: section(&mut headers, library.events()),
            packed: words(&mut payload, library.packed()),
            _pad: [0; 3],
        };
        // A binding may not be empty.
        for heap in [&mut headers, &mut payload] {
            if heap.is_empty() {
                heap.push([0; 4]);
            }
        }
        Self {
            layout,
            headers,
            payload,
        }
    }
}

/// An [`AnimationLibrary`] on the GPU, uploaded once: share it between animators with
/// [`crate::Animator::with_library`].
#[derive(Debug)]
pub struct GpuLibrary {
    library: Arc<AnimationLibrary>,
    layout: GpuLibraryLayout,
    layout_buffer: wgpu::Buffer,
    headers: wgpu::Buffer,
    payload: wgpu::Buffer,
}

impl GpuLibrary {
    /// Uploads `library` to `device`.
    ///
    /// Errors: a heap larger than the device's `max_storage_buffer_binding_size` (the message
    /// says which and by how much); buffers the device refuses ([`Error::Refused`]).
    pub fn new(device: &wgpu::Device, library: &AnimationLibrary) -> Result<Arc<Self>> {
        let heaps = LibraryHeaps::new(library);
        let cap = device.limits().max_storage_buffer_binding_size;
        for (what, heap) in [("header", &heaps.headers), ("payload", &heaps.payload)] {
            let bytes = (heap.len() * size_of::<Unit>()) as u64;
            if bytes > cap {
                return Err(Error::Limit {
                    what: format!(
                        "the library's {what} heap would take {bytes} bytes; the device allows {cap} per storage buffer"
                    ),
                });
            }
        }
        let storage = |label: &str, heap: &[Unit]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(heap),
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
        };
        let (layout_buffer, headers, payload) = super::refusable(
            device,
            || {
                format!(
                    "the library's buffers ({} bytes)",
                    (heaps.headers.len() + heaps.payload.len()) * size_of::<Unit>()
                )
            },
            || {
                let layout_buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("wgpu-anim library layout"),
                    contents: bytemuck::bytes_of(&heaps.layout),
                    usage: wgpu::BufferUsages::UNIFORM,
                });
                let headers = storage("wgpu-anim library headers", &heaps.headers);
                let payload = storage("wgpu-anim library payload", &heaps.payload);
                (layout_buffer, headers, payload)
            },
        )?;
        Ok(Arc::new(Self {
            library: Arc::new(library.clone()),
            layout: heaps.layout,
            layout_buffer,
            headers,
            payload,
        }))
    }

    /// The library as authored data (the CPU mirrors and the animator's validation read it).
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        &self.library
    }

    /// The library as shared (the animators' controllers hold it).
    #[must_use]
    pub fn library_arc(&self) -> &Arc<AnimationLibrary> {
        &self.library
    }

    /// Where each section of the heaps starts.
    #[must_use]
    pub fn layout(&self) -> &GpuLibraryLayout {
        &self.layout
    }

    /// The uniform holding [`GpuLibrary::layout`].
    #[must_use]
    pub fn layout_buffer(&self) -> &wgpu::Buffer {
        &self.layout_buffer
    }

    /// The header heap.
    #[must_use]
    pub fn headers(&self) -> &wgpu::Buffer {
        &self.headers
    }

    /// The payload heap.
    #[must_use]
    pub fn payload(&self) -> &wgpu::Buffer {
        &self.payload
    }
}
