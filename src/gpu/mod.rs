//! The GPU runtime. The library never creates a device of its own inside your renderer: every
//! type here takes your `wgpu::Device` and `wgpu::Queue`. [`headless_device`] is a convenience for
//! tools and tests that have none.

mod animator;
mod controller;
mod desc;
mod footprints;
mod inspect;
mod library;
mod page;
mod props;
mod readback;
mod rebuild;
mod recovery;
mod renderer;
mod ring;
mod skinning;
mod timing;
mod watch;

pub use animator::Animator;
pub use controller::{Controller, FrameUpload, PageState};
pub use desc::{AnimatorDesc, Curve, InstanceDesc, Layer, LayerMode, LoopMode, Transition};
pub use footprints::{FootprintRenderer, Footprints};
pub use inspect::evaluate_poses;
pub use library::{GpuLibrary, LibraryHeap};
pub use props::PropRenderer;
pub use readback::read_buffer;
pub use renderer::{
    Camera, GroundRenderer, MeshBuffers, OffscreenTarget, SkinnedRenderer, depth_state, depth_view, scene_pass,
    skin_on_gpu,
};
pub use ring::{FrameReadback, READBACK_SLOTS};
pub use skinning::SkinBinding;
pub use timing::PassTimer;

use crate::error::{Error, Result};

/// Creates a device and queue without a window, for tools, tests and benchmarks: the first
/// adapter wgpu offers (a software one such as lavapipe when there is no GPU), with timestamp
/// queries enabled when the adapter has them, and the adapter's own limits.
pub fn headless_device() -> Result<(wgpu::Device, wgpu::Queue)> {
    let adapter = headless_adapter()?;
    let limits = adapter.limits();
    request_device_with_limits(&adapter, limits)
}

/// As [`headless_device`], with exactly `limits` (for example `wgpu::Limits::default()`,
/// WebGPU's defaults, which every pipeline of this crate fits; the test suite runs on those).
pub fn headless_device_with_limits(limits: wgpu::Limits) -> Result<(wgpu::Device, wgpu::Queue)> {
    request_device_with_limits(&headless_adapter()?, limits)
}

fn headless_adapter() -> Result<wgpu::Adapter> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        force_fallback_adapter: false,
        compatible_surface: None,
        apply_limit_buckets: false,
    }))
    .map_err(|e| {
        Error::Device(format!(
            "{e}; on a machine without a GPU install a software Vulkan driver (Debian/Ubuntu: apt-get install mesa-vulkan-drivers)"
        ))
    })
}

/// Requests a device from `adapter` with the features and limits this crate makes use of:
/// timestamp queries when available, and the adapter's limits (large crowds need big buffers).
pub fn request_device(adapter: &wgpu::Adapter) -> Result<(wgpu::Device, wgpu::Queue)> {
    request_device_with_limits(adapter, adapter.limits())
}

/// Requests a device from `adapter` with timestamp queries when available and `limits`.
pub fn request_device_with_limits(
    adapter: &wgpu::Adapter,
    limits: wgpu::Limits,
) -> Result<(wgpu::Device, wgpu::Queue)> {
    let wanted = wgpu::Features::TIMESTAMP_QUERY;
    let desc = wgpu::DeviceDescriptor {
        label: Some("wgpu-anim device"),
        required_features: adapter.features() & wanted,
        required_limits: limits,
        ..Default::default()
    };
    pollster::block_on(adapter.request_device(&desc)).map_err(|e| Error::Device(e.to_string()))
}

/// Runs `create` inside validation and out-of-memory error scopes, so that what the device
/// refuses (a pipeline beyond its limits, a buffer it cannot allocate) comes back as
/// [`Error::Refused`] naming `what`, instead of reaching wgpu's uncaptured-error handler, which
/// panics by default.
pub(crate) fn refusable<T>(
    device: &wgpu::Device,
    what: impl FnOnce() -> String,
    create: impl FnOnce() -> T,
) -> Result<T> {
    let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = create();
    // Scopes pop innermost first.
    let invalid = pollster::block_on(validation.pop());
    let oom = pollster::block_on(out_of_memory.pop());
    match invalid.or(oom) {
        Some(e) => Err(Error::Refused {
            what: what(),
            reason: e.to_string(),
        }),
        None => Ok(value),
    }
}

/// Workgroup counts `(x, y)` for `groups` workgroups, split over two dimensions so that neither
/// exceeds `max_per_dimension`; shaders recover the linear index with `workgroup_linear`.
#[must_use]
pub fn split_dispatch(groups: u32, max_per_dimension: u32) -> (u32, u32) {
    if groups <= max_per_dimension {
        (groups, 1)
    } else {
        (max_per_dimension, groups.div_ceil(max_per_dimension))
    }
}
