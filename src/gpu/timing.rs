//! GPU timestamps around each pass, where the adapter supports them.

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;

/// A pair of timestamp queries per pass, resolved and read back on request. Create one with
/// [`PassTimer::new`]; it is `None` when the device lacks `Features::TIMESTAMP_QUERY`.
pub struct PassTimer {
    query_set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    passes: u32,
    period_ns: f32,
}

impl PassTimer {
    /// A timer for `passes` passes, or `None` without timestamp support.
    #[must_use]
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue, passes: u32) -> Option<Self> {
        if !device.features().contains(wgpu::Features::TIMESTAMP_QUERY) || passes == 0 {
            return None;
        }
        let query_set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("wgpu-anim pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: passes * 2,
        });
        let resolve = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("wgpu-anim timestamp resolve"),
            size: u64::from(passes) * 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(Self {
            query_set,
            resolve,
            passes,
            period_ns: queue.get_timestamp_period(),
        })
    }

    /// Number of passes timed.
    #[must_use]
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Timestamp writes for compute pass `pass`.
    #[must_use]
    pub fn compute_writes(&self, pass: u32) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        (pass < self.passes).then(|| wgpu::ComputePassTimestampWrites {
            query_set: &self.query_set,
            beginning_of_pass_write_index: Some(pass * 2),
            end_of_pass_write_index: Some(pass * 2 + 1),
        })
    }

    /// Resolves the queries; call after the timed passes, in the same encoder.
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.query_set, 0..self.passes * 2, &self.resolve, 0);
    }

    blocking! {
        /// Milliseconds each pass took, read back after the work was submitted:
        /// [`PassTimer::read_ms_async`], blocking (native only).
        ///
        /// Errors: as [`PassTimer::read_ms_async`].
        pub fn read_ms(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f64>> = Self::read_ms_async;
    }

    /// Milliseconds each pass took, read back after the work was submitted (in a browser,
    /// `.await` it).
    ///
    /// Errors: a failed mapping, or fewer timestamps than passes ([`Error::Device`]).
    pub async fn read_ms_async(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f64>> {
        let ticks: Vec<u64> =
            super::read_buffer_async(device, queue, &self.resolve, 0, u64::from(self.passes) * 2).await?;
        if ticks.len() != self.passes as usize * 2 {
            return Err(Error::Device("timestamp readback came back short".into()));
        }
        Ok(ticks
            .chunks_exact(2)
            .map(|p| p[1].saturating_sub(p[0]) as f64 * f64::from(self.period_ns) / 1e6)
            .collect())
    }
}
