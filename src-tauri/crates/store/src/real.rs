//! A nullable `DOUBLE PRECISION` argument. sqlx 0.8.6's `Any` driver sends a NULL `f64` to
//! Postgres typed as `float4` (its conversion table swaps `Real` and `Double` for NULLs), which
//! Postgres refuses next to a `float8` column ("incorrect binary data format"); a NULL `f32`
//! is sent as `float8`. So a missing value is bound as a NULL `f32`, a present one as `f64`.

use sqlx::any::Any;
use sqlx::encode::{Encode, IsNull};
use sqlx::error::BoxDynError;
use sqlx::types::Type;

/// An `Option<f64>` to bind (see the module doc).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Real(pub Option<f64>);

impl Type<Any> for Real {
    fn type_info() -> sqlx::any::AnyTypeInfo {
        <f64 as Type<Any>>::type_info()
    }
}

impl<'q> Encode<'q, Any> for Real {
    fn encode_by_ref(&self, buf: &mut <Any as sqlx::Database>::ArgumentBuffer<'q>) -> Result<IsNull, BoxDynError> {
        match self.0 {
            Some(v) => <f64 as Encode<Any>>::encode_by_ref(&v, buf),
            None => <Option<f32> as Encode<Any>>::encode_by_ref(&None, buf),
        }
    }
}
