//! Parts of the page whose code is out of the first load.
//!
//! A `#[leptos::lazy]` function returning the part's view is moved by
//! `cargo leptos build --split` into a WASM chunk of its own. [`lazy_view`]
//! shows it: the server renders an empty slot and hydration finds that slot;
//! the browser then fetches the chunk and builds the part in place. Once the
//! chunk is in, a part built again (a card re-rendered) shows at once.
//! Parts on the page as it loads wait for the gate (`gate.rs`): their chunks
//! are fetched once the chat is usable and the browser idle, so a first
//! visit fetches the chat's code alone.
//!
//! A Leptos `Suspense` around the lazy function would not do: the server
//! renders the part, but the browser's first poll, before the chunk has
//! arrived, expects the fallback, and hydration fails.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use leptos::__reexports::send_wrapper::SendWrapper;
use leptos::prelude::*;

#[cfg(feature = "hydrate")]
mod gate;

/// Lets the parts out of the first load start loading now (a person opened
/// one); otherwise they wait until the chat is usable and the browser idle.
pub fn load_now() {
    #[cfg(feature = "hydrate")]
    gate::open_now();
}

/// The view that `load` (a call of a `#[leptos::lazy]` function) makes,
/// rendered in the browser once its chunk has loaded, in the owner (and so
/// with the contexts) of the caller. The server renders nothing for it.
pub fn lazy_view<Fut>(load: impl FnOnce() -> Fut + 'static) -> impl IntoView
where
    Fut: Future<Output = AnyView> + 'static,
{
    let slot = SendWrapper::new(Rc::new(RefCell::new(None::<AnyView>)));
    let loaded = ArcTrigger::new();
    #[cfg(feature = "hydrate")]
    fill(load, &slot, &loaded);
    #[cfg(not(feature = "hydrate"))]
    let _ = load;
    move || {
        loaded.track();
        slot.borrow_mut().take()
    }
}

/// Puts the view in `slot` now when its chunk is already loaded, otherwise
/// once it is, and then wakes the slot.
#[cfg(feature = "hydrate")]
fn fill<Fut>(
    load: impl FnOnce() -> Fut + 'static,
    slot: &SendWrapper<Rc<RefCell<Option<AnyView>>>>,
    loaded: &ArcTrigger,
) where
    Fut: Future<Output = AnyView> + 'static,
{
    use futures::FutureExt;
    use leptos::reactive::computed::ScopedFuture;

    // While hydrating, the slot stays empty as the server rendered it, and
    // the chunk waits for the gate: the first load is the chat's alone.
    let hydrating = Owner::current_shared_context().is_some_and(|c| c.during_hydration());
    // Either the part's future, started, or the call that starts it.
    let pending = if hydrating {
        Err(load)
    } else {
        let mut view = Box::pin(ScopedFuture::new_untracked(load()));
        if let Some(ready) = view.as_mut().now_or_never() {
            *slot.borrow_mut() = Some(ready);
            return;
        }
        Ok(view)
    };
    let owner = Owner::current();
    let (slot, loaded) = (Rc::clone(slot), loaded.clone());
    leptos::task::spawn_local(async move {
        let view = match pending {
            Ok(view) => view,
            Err(load) => {
                gate::opened().await;
                let start = || Box::pin(ScopedFuture::new_untracked(load()));
                match owner {
                    Some(owner) => owner.with(start),
                    None => start(),
                }
            }
        };
        *slot.borrow_mut() = Some(view.await);
        loaded.notify();
    });
}
