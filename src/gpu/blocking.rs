//! The blocking twins of the library's async functions.
//!
//! The rule: every async fn that a native tool wants blocking gets its twin through
//! [`blocking!`], and nowhere else. The twin has its own name, signature and docs, exists only
//! natively (`#[cfg(not(target_arch = "wasm32"))]`: a browser cannot block) and does nothing but
//! `pollster::block_on` the async fn with the same arguments. In a browser you `.await` the async
//! one. Other waits (creating a device, asking whether the device refused something) are not
//! twins and block where they are.

/// Writes blocking twins. Each declaration is a function's attributes and docs, its signature,
/// and after `=` the path of the async fn it blocks on:
///
/// ```text
/// blocking! {
///     /// [`Animator::new_async`], blocking (native only).
///     pub fn new(device: &wgpu::Device, library: &AnimationLibrary, desc: &AnimatorDesc) -> Result<Self> =
///         Self::new_async;
/// }
/// ```
///
/// gives the `#[cfg(not(target_arch = "wasm32"))]` function whose body is
/// `pollster::block_on(Self::new_async(device, library, desc))`. A receiver (`&self`,
/// `&mut self`) is passed first (`Self::rebuild_async(self, ...)`); type parameters
/// (`<T: bytemuck::Pod>`) are declared and left to inference.
macro_rules! blocking {
    () => {};
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($gen:ident: $bound:path),+>)?
            (&mut $recv:ident $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty = $async:path;
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[cfg(not(target_arch = "wasm32"))]
        $vis fn $name $(<$($gen: $bound),+>)? (&mut $recv $(, $arg: $ty)*) -> $ret {
            ::pollster::block_on($async($recv $(, $arg)*))
        }
        $crate::gpu::blocking::blocking! { $($rest)* }
    };
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($gen:ident: $bound:path),+>)?
            (&$recv:ident $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty = $async:path;
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[cfg(not(target_arch = "wasm32"))]
        $vis fn $name $(<$($gen: $bound),+>)? (&$recv $(, $arg: $ty)*) -> $ret {
            ::pollster::block_on($async($recv $(, $arg)*))
        }
        $crate::gpu::blocking::blocking! { $($rest)* }
    };
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($gen:ident: $bound:path),+>)?
            ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $async:path;
        $($rest:tt)*
    ) => {
        $(#[$meta])*
        #[cfg(not(target_arch = "wasm32"))]
        $vis fn $name $(<$($gen: $bound),+>)? ($($arg: $ty),*) -> $ret {
            ::pollster::block_on($async($($arg),*))
        }
        $crate::gpu::blocking::blocking! { $($rest)* }
    };
}

pub(crate) use blocking;
