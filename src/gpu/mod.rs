//! The GPU runtime. The library never creates a device of its own inside your renderer: every
//! type here takes your `wgpu::Device` and `wgpu::Queue`. [`headless_device`] is a convenience for
//! tools and tests that have none.
//!
//! Data come back to the CPU one of two ways: without waiting, through the watches and
//! [`Animator::take_readbacks`] (a ring of mapped copies, a frame or more late, for a running
//! app), or at once, mapping a copy and waiting for it, with [`read_buffer_async`] (natively also
//! the blocking `read_buffer`) and the animator's `read_*` methods (for tools and tests).

/// `with_<field>` methods for a `#[non_exhaustive]` struct (which struct expressions outside the
/// crate cannot build): `$ty { with_x => x: T, .. }` gives `const fn with_x(self, x: T) -> Self`,
/// the value with `x` set.
macro_rules! builders {
    ($ty:ident { $($with:ident => $field:ident: $t:ty),* $(,)? }) => {
        impl $ty {
            $(
                #[doc = concat!("This with [`", stringify!($ty), "::", stringify!($field), "`] set.")]
                #[must_use]
                pub const fn $with(mut self, $field: $t) -> Self {
                    self.$field = $field;
                    self
                }
            )*
        }
    };
}

mod animator;
pub(crate) mod blocking;
mod budget;
mod controller;
mod culled_draws;
#[cfg(feature = "scene")]
mod demo;
mod desc;
mod inspect;
mod library;
mod morph;
mod page;
mod pipeline;
mod props;
mod read_back;
mod rebuild;
mod recovery;
mod renderer;
mod skinning;
mod target;
mod timing;
mod vat;
pub(crate) mod wgpu_util;

pub use crate::layout::Camera;
pub use animator::Animator;
pub use budget::LodBudget;
pub use controller::{Controller, DEFAULT_UPDATE_RATES, DEFAULT_VAT_SIZE, FrameUpload, PageState, SectionWrite};
pub use culled_draws::CulledDraws;
#[cfg(feature = "scene")]
pub use demo::{FootprintRenderer, Footprints, GroundRenderer};
pub use desc::{
    AnimatorDesc, Blending, CharacterThreads, Curve, HierarchyWalk, InstanceDesc, Layer, LayerMode, LoopMode, Skinning,
    Transition,
};
pub use library::{GpuLibrary, LibraryHeap};
pub use morph::GpuMorphTargets;
pub use props::PropRenderer;
#[cfg(not(target_arch = "wasm32"))]
pub use read_back::read_buffer;
pub use read_back::{FrameReadback, READBACK_SLOTS, read_buffer_async};
pub use renderer::{MeshBuffers, SkinnedRenderer};
#[cfg(all(feature = "testing", not(target_arch = "wasm32")))]
pub(crate) use renderer::{built_in_binding, built_in_skin_source};
pub use skinning::{MeshData, SkinBinding};
pub use target::{OffscreenTarget, depth_view, scene_pass};
pub use timing::PassTimer;
pub use vat::GpuVat;
pub use wgpu_util::depth_state;

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

/// Runs `create` (your own shader modules, pipelines, bind groups or buffers) inside validation
/// and out-of-memory error scopes and returns its value, or [`Error::Refused`] naming `what` with
/// wgpu's message, instead of letting the error reach wgpu's uncaptured-error handler (which
/// panics by default).
///
/// It waits for the device's answer, so it is `async`: in a browser, `.await` it (WebGPU answers
/// asynchronously); natively, any executor runs it (`pollster::block_on`), and the answer is
/// there at once. The crate's own constructors use it the same way.
///
/// ```no_run
/// # async fn demo(device: &wgpu::Device) -> wgpu_anim::Result<()> {
/// let module = wgpu_anim::gpu::scoped(device, "my skinning shader", || {
///     device.create_shader_module(wgpu::ShaderModuleDescriptor {
///         label: Some("my skinning shader"),
///         source: wgpu::ShaderSource::Wgsl("this is not WGSL".into()),
///     })
/// })
/// .await;
/// assert!(module.is_err()); // Error::Refused, with naga's message
/// # Ok(())
/// # }
/// ```
///
/// Errors: [`Error::Refused`] when the device reports a validation or out-of-memory error for
/// anything `create` did; `create`'s value is dropped then.
pub async fn scoped<T>(device: &wgpu::Device, what: &str, create: impl FnOnce() -> T) -> Result<T> {
    refusable(device, || what.to_owned(), create).await
}

/// [`scoped`] with the name of what is created made only on an error.
pub(crate) async fn refusable<T>(
    device: &wgpu::Device,
    what: impl FnOnce() -> String,
    create: impl FnOnce() -> T,
) -> Result<T> {
    let out_of_memory = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let value = create();
    // Scopes pop innermost first; both are popped before either answer is awaited.
    let invalid = validation.pop();
    let oom = out_of_memory.pop();
    match invalid.await.or(oom.await) {
        Some(e) => Err(Error::Refused {
            what: what(),
            reason: e.to_string(),
        }),
        None => Ok(value),
    }
}

/// [`refusable`] for the calls that cannot wait, those made while a frame runs or set up between
/// frames (watches, previous palettes, the rebuild after a lost device). Natively the device
/// answers at once and its refusal is an [`Error::Refused`]. In a browser the answer would come
/// later, so no scope is pushed: a refusal reaches the device's uncaptured-error handler
/// (`wgpu::Device::on_uncaptured_error`), as any other WebGPU error of the frame does.
pub(crate) fn refusable_now<T>(
    device: &wgpu::Device,
    what: impl FnOnce() -> String,
    create: impl FnOnce() -> T,
) -> Result<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        pollster::block_on(refusable(device, what, create))
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (device, what);
        Ok(create())
    }
}

/// Whether a validation error scope pushed around `call`, one that cannot wait, caught an error
/// (the readback ring's and the checkpoints' maps, every frame): natively the answer is there at
/// once; in a browser no scope is pushed ([`refusable_now`]) and this says no.
pub(crate) fn scope_caught(device: &wgpu::Device, call: impl FnOnce()) -> bool {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        call();
        pollster::block_on(scope.pop()).is_some()
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = device;
        call();
        false
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
