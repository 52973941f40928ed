// Text that several of the ledger's migrations run, written once. A migration is never edited once shipped: each
// version's SQL is exactly what it was when these parts were written out in full, and a new version that changes
// a function writes its own text instead of changing a part.

/** A part starts on the line after its opening backquote and ends at its closing one. */
function part(text: TemplateStringsArray): string {
  return text[0]!.slice(1);
}

/** tg_begin's parameters, results and declarations with one daily cap (migrations 2 and 3). */
export const BEGIN_HEAD_DAILY_CAP = part`
  p_account text, p_action text, p_price bigint, p_hold bigint, p_method text, p_principal text,
  p_idem_key text, p_idem_fp text, p_ttl bigint, p_cap_limit bigint, p_cap_day text,
  p_funding bigint, p_funding_memo text, p_meta text, p_now bigint, p_idem_ttl bigint,
  p_replica text, p_call text, p_async boolean,
  OUT kind text, OUT call_id text, OUT response text, OUT available bigint, OUT spent bigint,
  OUT frozen_reason text
) LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  a accounts%ROWTYPE;
  k idempotency_keys%ROWTYPE;
BEGIN`;

/** tg_begin's account lock, idempotency claim and funds check (migrations 2, 3 and 5). */
export const BEGIN_ADMISSION = part`
  IF p_async THEN PERFORM set_config('synchronous_commit', 'off', true); END IF;
  -- The account lock first: everything below is serialized per account, on every replica.
  SELECT * INTO a FROM accounts WHERE id = p_account FOR UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'unknown account %', p_account USING ERRCODE = 'TGL01'; END IF;

  IF p_idem_key IS NOT NULL THEN
    SELECT * INTO k FROM idempotency_keys WHERE account_id = p_account AND key = p_idem_key;
    IF FOUND AND k.status = 'done' AND k.created_at < p_now - p_idem_ttl THEN
      DELETE FROM idempotency_keys WHERE account_id = p_account AND key = p_idem_key;
    ELSIF FOUND THEN
      call_id := k.call_id;
      IF k.fingerprint <> p_idem_fp THEN kind := 'mismatch';
      ELSIF k.status = 'in_flight' THEN kind := 'in_flight';
      ELSE kind := 'replay'; response := k.response;
      END IF;
      RETURN;
    END IF;
  END IF;

  IF a.kind <> 'system' THEN
    available := a.balance_micros - a.held_micros
      + CASE WHEN a.line_frozen_at IS NULL THEN a.credit_line_micros ELSE 0 END + p_funding;
    IF available < p_hold THEN
      kind := 'insufficient';
      IF a.credit_line_micros > 0 AND a.line_frozen_at IS NOT NULL THEN
        frozen_reason := coalesce(a.line_frozen_reason, '');
      END IF;
      RETURN;
    END IF;
  END IF;`;

/** tg_begin's one daily cap (migrations 2 and 3; 5 has a list of caps). */
export const BEGIN_DAILY_CAP = part`
  IF p_cap_day IS NOT NULL THEN
    SELECT d.spent_micros INTO spent FROM daily_spend d WHERE d.account_id = p_account AND d.day = p_cap_day;
    spent := coalesce(spent, 0);
    IF spent + p_hold > p_cap_limit THEN kind := 'daily_cap'; RETURN; END IF;
    INSERT INTO daily_spend (account_id, day, spent_micros) VALUES (p_account, p_cap_day, p_hold)
      ON CONFLICT (account_id, day) DO UPDATE SET spent_micros = daily_spend.spent_micros + excluded.spent_micros;
  END IF;`;

/** tg_capture's updates of the account and the call, fed by the deleted pending hold (migrations 3 and 5). */
export const CAPTURE_CTES = part`
  ), a AS (
    UPDATE accounts SET balance_micros = balance_micros - p_amount, held_micros = held_micros - h.amount_micros,
                        revenue_micros = revenue_micros + p_amount
      FROM h WHERE accounts.id = h.account_id
  ), c AS (
    UPDATE calls SET status = 'succeeded', charged_micros = p_amount, provider = p_provider, duration_ms = p_duration,
                     finished_at = p_now, meta = coalesce(p_meta, calls.meta)
      FROM h WHERE calls.id = p_call
      RETURNING calls.idempotency_key
  ), e AS (`;

/** The end of tg_capture: funding not collected, the job, the idempotency key (migrations 3 and 5). */
export const CAPTURE_TAIL = part`
  IF v_funding > p_amount THEN
    PERFORM tg_transfer(v_account, 'sys_funding', -(v_funding - p_amount), 'topup', p_call,
                        'reversal: funding not collected', p_now);
  END IF;
  IF p_job IS NOT NULL THEN
    INSERT INTO call_jobs (account_id, handle, call_id) VALUES (v_account, p_job, p_call) ON CONFLICT DO NOTHING;
  END IF;
  IF v_key IS NOT NULL THEN
    UPDATE idempotency_keys SET status = 'done', response = p_response
     WHERE account_id = v_account AND key = v_key AND call_id = p_call;
  END IF;
  RETURN p_amount;
END $$;`;

/** tg_release's updates of the account and the call, fed by the deleted pending hold (migrations 3 and 5). */
export const RELEASE_CTES = part`
  ), a AS (
    UPDATE accounts SET held_micros = held_micros - h.amount_micros FROM h WHERE accounts.id = h.account_id
  ), c AS (
    UPDATE calls SET status = 'failed', error_code = p_error, provider = coalesce(p_provider, calls.provider),
                     duration_ms = coalesce(p_duration, calls.duration_ms), finished_at = p_now,
                     meta = coalesce(p_meta, calls.meta)
      FROM h WHERE calls.id = p_call
      RETURNING calls.idempotency_key
  )`;

/** The end of tg_release: funding reversed, the idempotency key released (migrations 3 and 5). */
export const RELEASE_TAIL = part`
  IF v_funding > 0 THEN
    PERFORM tg_transfer(v_account, 'sys_funding', -v_funding, 'topup', p_call, 'reversal: funding not collected', p_now);
  END IF;
  -- Nothing was charged, so the key is released: a retry with the same key runs the call again.
  IF v_key IS NOT NULL THEN
    DELETE FROM idempotency_keys WHERE account_id = v_account AND key = v_key AND call_id = p_call;
  END IF;
  RETURN true;
END $$;`;
