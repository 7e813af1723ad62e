//! Reading GPU buffers back to the CPU (tests, tools, benchmarks).

use crate::error::{Error, Result};
use crate::gpu::blocking::blocking;

blocking! {
    /// Copies `count` elements of `T` starting at element `first` out of `buffer` (which needs
    /// `COPY_SRC`) and waits for them: [`read_buffer_async`], blocking (native only: a browser
    /// cannot block).
    ///
    /// Errors: as [`read_buffer_async`].
    pub fn read_buffer<T: bytemuck::Pod>(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        buffer: &wgpu::Buffer,
        first: u64,
        count: u64,
    ) -> Result<Vec<T>> = read_buffer_async;
}

/// Copies `count` elements of `T` starting at element `first` out of `buffer` (which needs
/// `COPY_SRC`) and returns them once the GPU has copied them: natively it waits for the device
/// inside; in a browser `.await` it (the browser maps the copy when the GPU is done).
///
/// Errors: a range past the end of `buffer`, an offset not a multiple of 4 bytes, a byte count
/// that overflows; a device that fails to map the copy ([`Error::Device`]).
pub async fn read_buffer_async<T: bytemuck::Pod>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    first: u64,
    count: u64,
) -> Result<Vec<T>> {
    let Some(offset) = first.checked_mul(size_of::<T>() as u64) else {
        return Err(Error::Limit {
            what: format!("a read of {count} elements from element {first} overflows a byte count"),
        });
    };
    read_at_async(device, queue, buffer, offset, count).await
}

/// Copies `count` elements of `T` starting at byte `offset` (a multiple of 4) out of `buffer`:
/// as [`read_buffer_async`], for a section of a buffer that starts where no whole element of
/// `T` would (a page buffer's sections start at multiples of 256 bytes).
pub(crate) async fn read_at_async<T: bytemuck::Pod>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    buffer: &wgpu::Buffer,
    offset: u64,
    count: u64,
) -> Result<Vec<T>> {
    let Some(size) = count.checked_mul(size_of::<T>() as u64) else {
        return Err(Error::Limit {
            what: format!("a read of {count} elements at byte {offset} overflows a byte count"),
        });
    };
    if size == 0 {
        return Ok(Vec::new());
    }
    // Copies move whole 4-byte words from a 4-byte aligned offset.
    if !offset.is_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT) {
        return Err(Error::Limit {
            what: format!("a read at byte {offset}: copies start at a multiple of 4 bytes"),
        });
    }
    if offset
        .checked_add(size.next_multiple_of(4))
        .is_none_or(|end| end > buffer.size())
    {
        return Err(Error::Limit {
            what: format!(
                "read of {size} bytes at {offset} past the end of a {} byte buffer",
                buffer.size()
            ),
        });
    }
    let staging = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("wgpu-anim readback"),
        size: size.next_multiple_of(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("readback"),
    });
    encoder.copy_buffer_to_buffer(buffer, offset, &staging, 0, size.next_multiple_of(4));
    queue.submit([encoder.finish()]);
    let slice = staging.slice(..);
    let (tx, rx) = futures_channel::oneshot::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    // Natively the map completes when the device is polled; in a browser, on its own.
    #[cfg(not(target_arch = "wasm32"))]
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| Error::Device(format!("waiting for a readback: {e}")))?;
    rx.await
        .map_err(|_| Error::Device("a readback's mapping was dropped unanswered".into()))?
        .map_err(|e| Error::Device(format!("mapping a readback buffer: {e}")))?;
    let data = slice
        .get_mapped_range()
        .map_err(|e| Error::Device(format!("reading a mapped buffer: {e}")))?;
    // A copy: in a browser the mapped bytes need not be aligned for `T`.
    let out: Vec<T> = bytemuck::pod_collect_to_vec(&data[..size as usize]);
    drop(data);
    staging.unmap();
    Ok(out)
}

blocking! {
    /// [`read_at_async`], blocking (native only).
    pub(crate) fn read_at<T: bytemuck::Pod>(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        buffer: &wgpu::Buffer,
        offset: u64,
        count: u64,
    ) -> Result<Vec<T>> = read_at_async;
}
