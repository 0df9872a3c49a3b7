//! Stand-ins for the N-API functions the library's Node layer refers to. Only a Node process
//! provides them; the fuzz targets never reach that layer, so each one just aborts.

macro_rules! stubs {
    ($($name:ident),* $(,)?) => {$(
        #[no_mangle]
        pub extern "C" fn $name() {
            std::process::abort()
        }
    )*};
}

stubs!(
    napi_add_env_cleanup_hook,
    napi_call_function,
    napi_call_threadsafe_function,
    napi_coerce_to_string,
    napi_create_array_with_length,
    napi_create_error,
    napi_create_function,
    napi_create_object,
    napi_create_promise,
    napi_create_reference,
    napi_create_string_utf8,
    napi_create_threadsafe_function,
    napi_define_properties,
    napi_delete_reference,
    napi_fatal_exception,
    napi_get_and_clear_last_exception,
    napi_get_cb_info,
    napi_get_global,
    napi_get_named_property,
    napi_get_null,
    napi_get_prototype,
    napi_get_reference_value,
    napi_get_undefined,
    napi_get_value_string_utf8,
    napi_has_own_property,
    napi_is_error,
    napi_is_exception_pending,
    napi_new_instance,
    napi_reference_unref,
    napi_reject_deferred,
    napi_release_threadsafe_function,
    napi_remove_env_cleanup_hook,
    napi_resolve_deferred,
    napi_set_element,
    napi_set_named_property,
    napi_set_property,
    napi_throw,
    napi_typeof,
    napi_unref_threadsafe_function,
    napi_unwrap,
    napi_wrap,
);
