"""A small SIP user agent server over UDP (RFC 3261) that answers calls and hands them on.

It answers INVITE with 100/180/200 and an SDP answer, retransmits final INVITE responses with
T1 doubling until the ACK arrives (Timers G/H), keeps non-INVITE responses for retransmitted
requests (Timer J), and handles ACK, BYE, CANCEL (200 + 487), OPTIONS, INFO (DTMF),
re-INVITE and late offers (no SDP in the INVITE: we offer, the ACK answers). It has no game
logic: an application implements :class:`CallHandler`.

In-dialog requests we send (BYE) go to the first Record-Route entry or the Contact when those
name an IP address, else back to where the INVITE came from: behind Kamailio that is the proxy.

A datagram that does not parse, or lacks the headers a response needs, is logged and dropped;
every call's state lives in its own :class:`Call`, so one bad packet cannot affect others.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import secrets
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final, cast

from vollmond.phone.dtmf import DtmfParseError, parse_info_dtmf
from vollmond.phone.g711 import ULAW
from vollmond.phone.media import Int16Array, MediaParams, MediaTicker, RtpEndpoint
from vollmond.phone.sdp import (
    OFFER_DTMF_PT,
    Negotiated,
    SdpError,
    SessionDescription,
    build_answer,
    build_offer,
    negotiate,
    parse_sdp,
)
from vollmond.phone.sip.call import Call, CallHandler, CallState, EndReason
from vollmond.phone.sip.message import (
    Headers,
    SipParseError,
    SipRequest,
    SipResponse,
    header_params,
    header_uri,
    parse_cseq,
    parse_message,
    response_for,
)

__all__ = ["Call", "CallHandler", "CallState", "EndReason", "SipUas", "UasConfig"]

log = logging.getLogger(__name__)

MAGIC_COOKIE: Final = "z9hG4bK"
ALLOWED_METHODS: Final = ("INVITE", "ACK", "BYE", "CANCEL", "OPTIONS", "INFO")
#: Methods a SIP peer may reasonably send that this server knows but does not do (→ 405).
KNOWN_UNSUPPORTED: Final = frozenset(
    {"REGISTER", "SUBSCRIBE", "NOTIFY", "PUBLISH", "MESSAGE", "REFER", "UPDATE", "PRACK"}
)
_REQUIRED: Final = ("Via", "From", "To", "Call-ID", "CSeq")
_ALLOW: Final = ("Allow", ", ".join(ALLOWED_METHODS))
#: Media state of a late-offer call until the ACK brings the answer: nothing is sent.
_LATE_OFFER: Final = Negotiated(
    media_index=0,
    remote_address="0.0.0.0",
    remote_port=9,
    codec=ULAW,
    audio_pt=0,
    dtmf_pt=OFFER_DTMF_PT,
    direction="inactive",
)


@dataclass(frozen=True, slots=True)
class UasConfig:
    """Server settings; timers follow RFC 3261 (T1 500 ms, T2 4 s) unless a test shrinks them."""

    host: str = "127.0.0.1"
    port: int = 5060
    advertised_host: str | None = None
    ring_time: float = 0.0
    t1: float = 0.5
    t2: float = 4.0
    rtp_timeout: float = 30.0
    session_timeout: float = 4 * 3600.0
    user_agent: str = "vollmond"

    @property
    def contact_host(self) -> str:
        """The address put into Contact and SDP."""
        return self.advertised_host or self.host


@dataclass(eq=False)
class _ServerTransaction:
    """What is needed to answer a retransmitted request and to stop retransmitting."""

    request: SipRequest
    addr: tuple[str, int]
    last_response: bytes | None = None
    final_sent: bool = False
    retransmit: asyncio.Task[None] | None = None
    call: Call | None = None
    ring: asyncio.TimerHandle | None = None


def _transaction_key(request: SipRequest) -> str:
    """RFC 3261 §17.2.3: the top Via branch (plus method, as CANCEL shares INVITE's branch)."""
    via = request.require("Via")
    branch = header_params(via).get("branch", "")
    method = "INVITE" if request.method == "ACK" else request.method
    if branch.startswith(MAGIC_COOKIE):
        return f"{branch}|{via.split(';', 1)[0]}|{method}"
    number, _ = parse_cseq(request.require("CSeq"))
    return f"{request.require('Call-ID')}|{request.require('From')}|{number}|{method}"


def _tag(value: str) -> str:
    return header_params(value).get("tag", "")


def _new_tag() -> str:
    return secrets.token_hex(6)


def _uri_address(uri: str) -> tuple[str, int] | None:
    """host:port of a sip: URI when the host is an IP literal (no DNS on the media path)."""
    rest = uri.split(":", 1)[1] if ":" in uri else uri
    hostport = rest.split("@", 1)[-1].split(";", 1)[0].split("?", 1)[0]
    if hostport.startswith("["):
        host, _, port_text = hostport[1:].partition("]")
        port_text = port_text.lstrip(":")
    else:
        host, _, port_text = hostport.partition(":")
    try:
        ipaddress.ip_address(host)
        port = int(port_text) if port_text else 5060
    except ValueError:
        return None
    return host, port


class SipUas(asyncio.DatagramProtocol):
    """The UDP SIP server. Create with :meth:`start`, stop with :meth:`close`."""

    def __init__(self, config: UasConfig, handler: CallHandler) -> None:
        self.config = config
        self.handler = handler
        self._transport: asyncio.DatagramTransport | None = None
        self._transactions: dict[str, _ServerTransaction] = {}
        self._calls: dict[tuple[str, str], Call] = {}
        self._client: dict[str, asyncio.Future[SipResponse]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._ticker = MediaTicker()
        self.dropped = 0

    @classmethod
    async def start(cls, config: UasConfig, handler: CallHandler) -> SipUas:
        """Bind the SIP socket and start answering."""
        loop = asyncio.get_running_loop()
        _, uas = await loop.create_datagram_endpoint(
            lambda: cls(config, handler), local_addr=(config.host, config.port)
        )
        return uas

    @property
    def port(self) -> int:
        """The bound SIP port (useful when configured as 0)."""
        if self._transport is None:
            raise RuntimeError("server is not started")
        port: int = self._transport.get_extra_info("sockname")[1]
        return port

    @property
    def calls(self) -> list[Call]:
        """Calls that are not yet ended."""
        return list(self._calls.values())

    async def close(self, bye_timeout: float = 2.0) -> None:
        """Hang up every call (BYE, waiting at most ``bye_timeout`` for answers) and close."""
        byes = [
            asyncio.ensure_future(self._end_call(call, EndReason.SHUTDOWN, send_bye=True))
            for call in list(self._calls.values())
        ]
        if byes:
            await asyncio.wait(byes, timeout=bye_timeout)
        for bye in byes:
            bye.cancel()
        for txn in self._transactions.values():
            self._stop_retransmit(txn)
        for task in list(self._tasks):
            task.cancel()
        if self._transport is not None:
            self._transport.close()

    @staticmethod
    def _notify(callback: Callable[..., None], *args: object) -> None:
        """Call the application; its bugs are logged, never allowed to corrupt SIP state."""
        try:
            callback(*args)
        except Exception:
            log.exception("call handler %s failed", getattr(callback, "__name__", callback))

    # --- transport -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Datagram endpoints always get a datagram transport (not a subclass in CPython 3.11).
        self._transport = cast(asyncio.DatagramTransport, transport)

    def error_received(self, exc: Exception) -> None:
        log.debug("SIP socket error: %s", exc)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        try:
            message = parse_message(data)
            if isinstance(message, SipResponse):
                self._on_response(message)
                return
            for name in _REQUIRED:
                message.require(name)
            parse_cseq(message.require("CSeq"))
            self._on_request(message, addr)
        except (SipParseError, SdpError) as exc:
            self.dropped += 1
            log.warning("dropping bad SIP datagram from %s:%s: %s", addr[0], addr[1], exc)

    def _send(self, data: bytes, addr: tuple[str, int]) -> None:
        if self._transport is not None and not self._transport.is_closing():
            self._transport.sendto(data, addr)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _respond(
        self,
        txn: _ServerTransaction,
        status: int,
        *,
        to_tag: str | None = None,
        extra: Headers = (),
        body: bytes = b"",
    ) -> bytes:
        response = response_for(
            txn.request,
            status,
            to_tag=to_tag,
            extra=(("Server", self.config.user_agent), *extra),
            body=body,
        )
        data = response.serialise()
        txn.last_response = data
        txn.final_sent = status >= 200
        self._send(data, txn.addr)
        return data

    def _contact(self) -> tuple[str, str]:
        return ("Contact", f"<sip:vollmond@{self.config.contact_host}:{self.port}>")

    # --- request dispatch ------------------------------------------------------------------

    def _on_request(self, request: SipRequest, addr: tuple[str, int]) -> None:
        key = _transaction_key(request)
        existing = self._transactions.get(key)
        if request.method == "ACK":
            self._on_ack(request, existing)
            return
        if existing is not None:
            # A retransmission: repeat whatever we last said.
            if existing.last_response is not None:
                self._send(existing.last_response, addr)
            return
        txn = _ServerTransaction(request, addr)
        self._transactions[key] = txn
        if request.method != "INVITE":
            # Timer J: keep the answer for retransmissions, then forget the transaction.
            asyncio.get_running_loop().call_later(
                64 * self.config.t1, self._transactions.pop, key, None
            )
        method = request.method
        if method == "INVITE":
            self._on_invite(txn, key)
        elif method == "CANCEL":
            self._on_cancel(txn)
        elif method == "BYE":
            self._on_bye(txn)
        elif method == "OPTIONS":
            self._respond(
                txn,
                200,
                to_tag=_new_tag(),
                extra=(_ALLOW, ("Accept", "application/sdp"), self._contact()),
            )
        elif method == "INFO":
            self._on_info(txn)
        elif method in KNOWN_UNSUPPORTED:
            self._respond(txn, 405, to_tag=_new_tag(), extra=(_ALLOW,))
        else:
            self._respond(txn, 501, to_tag=_new_tag(), extra=(_ALLOW,))

    def _dialog_of(self, request: SipRequest) -> Call | None:
        call_id = request.require("Call-ID")
        call = self._calls.get((call_id, _tag(request.require("To"))))
        if call is None or call.remote_tag != _tag(request.require("From")):
            return None
        return call

    # --- INVITE ----------------------------------------------------------------------------

    def _on_invite(self, txn: _ServerTransaction, key: str) -> None:
        request = txn.request
        if _tag(request.require("To")):
            self._on_reinvite(txn)
            return
        self._respond(txn, 100)
        offer = self._offer_of(request)
        if offer is None and request.body:
            self._respond_final(txn, 488, _new_tag(), extra=(("Warning", '399 - "not SDP"'),))
            return
        try:
            chosen = negotiate(offer) if offer is not None else _LATE_OFFER
        except SdpError as exc:
            log.info("rejecting call %s: %s", request.get("Call-ID"), exc)
            self._respond_final(txn, 488, _new_tag(), extra=(("Warning", f'304 - "{exc}"'),))
            return
        self._spawn(self._setup_call(txn, key, offer, chosen))

    @staticmethod
    def _offer_of(request: SipRequest) -> SessionDescription | None:
        ctype = (request.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if ctype != "application/sdp" or not request.body:
            return None
        return parse_sdp(request.body)

    async def _setup_call(
        self,
        txn: _ServerTransaction,
        key: str,
        offer: SessionDescription | None,
        chosen: Negotiated,
    ) -> None:
        request = txn.request
        local_tag = _new_tag()
        call_holder: list[Call] = []

        def on_audio(samples: Int16Array) -> None:
            if call_holder and call_holder[0].state is CallState.CONFIRMED:
                self._notify(self.handler.on_audio, call_holder[0], samples)

        def on_digit(digit: str) -> None:
            if call_holder and call_holder[0].state is CallState.CONFIRMED:
                self._notify(self.handler.on_dtmf, call_holder[0], digit)

        try:
            media = await RtpEndpoint.open(
                self.config.host, self._media_params(chosen), on_audio, on_digit
            )
        except OSError as exc:
            log.error("no RTP port for call %s: %s", request.get("Call-ID"), exc)
            if not txn.final_sent:
                self._respond_final(txn, 503, local_tag)
            return
        if txn.final_sent:  # CANCELled while the port was being opened
            media.close()
            return
        contact = request.get("Contact")
        call = Call(
            call_id=request.require("Call-ID"),
            local_tag=local_tag,
            remote_tag=_tag(request.require("From")),
            from_header=request.require("From"),
            to_header=request.require("To"),
            remote_target=header_uri(contact) if contact else request.uri,
            route_set=tuple(request.get_all("Record-Route")),
            peer=txn.addr,
            negotiated=chosen,
            media=media,
            invite_cseq=parse_cseq(request.require("CSeq"))[0],
            awaiting_answer=offer is None,
            _hangup=self._hangup,
        )
        call_holder.append(call)
        txn.call = call
        self._calls[(call.call_id, local_tag)] = call
        self._respond(txn, 180, to_tag=local_tag, extra=(self._contact(),))
        answer = self._answer(call, offer)
        loop = asyncio.get_running_loop()
        txn.ring = loop.call_later(self.config.ring_time, self._answer_call, txn, answer)

    def _media_params(self, chosen: Negotiated) -> MediaParams:
        return MediaParams(
            remote=(chosen.remote_address, chosen.remote_port),
            codec=chosen.codec,
            audio_pt=chosen.audio_pt,
            dtmf_pt=chosen.dtmf_pt,
            send=not chosen.on_hold,
        )

    def _answer(self, call: Call, offer: SessionDescription | None) -> bytes:
        """Our SDP for the 200: an answer to the caller's offer, or our own offer if none."""
        if offer is None:
            return build_offer(
                local_address=self.config.contact_host,
                local_port=call.media.local_port,
                session_id=int(call.local_tag, 16) % 10**9,
                version=call.sdp_version,
            )
        return build_answer(
            offer,
            call.negotiated,
            local_address=self.config.contact_host,
            local_port=call.media.local_port,
            session_id=int(call.local_tag, 16) % 10**9,
            version=call.sdp_version,
        )

    def _answer_call(self, txn: _ServerTransaction, answer: bytes) -> None:
        call = txn.call
        if call is None or txn.final_sent or call.state is CallState.ENDED:
            return
        call.state = CallState.ANSWERED
        self._respond_final(
            txn,
            200,
            call.local_tag,
            extra=(self._contact(), _ALLOW, ("Content-Type", "application/sdp")),
            body=answer,
        )
        call.media.start(self._ticker)

    def _respond_final(
        self,
        txn: _ServerTransaction,
        status: int,
        to_tag: str,
        *,
        extra: Headers = (),
        body: bytes = b"",
    ) -> None:
        """Send a final INVITE response and retransmit it (T1, doubling to T2) until ACK."""
        data = self._respond(txn, status, to_tag=to_tag, extra=extra, body=body)
        txn.retransmit = asyncio.get_running_loop().create_task(self._retransmit(txn, data))

    async def _retransmit(self, txn: _ServerTransaction, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 64 * self.config.t1
        interval = self.config.t1
        while loop.time() + interval < deadline:
            await asyncio.sleep(interval)
            self._send(data, txn.addr)
            interval = min(2 * interval, self.config.t2)
        await asyncio.sleep(max(0.0, deadline - loop.time()))
        txn.retransmit = None
        self._forget(txn)
        call = txn.call
        if call is not None and call.state is CallState.ANSWERED:
            log.warning("no ACK for call %s, hanging up", call.call_id)
            await self._end_call(call, EndReason.ACK_TIMEOUT, send_bye=True)

    def _forget(self, txn: _ServerTransaction) -> None:
        for key, value in list(self._transactions.items()):
            if value is txn:
                del self._transactions[key]

    def _stop_retransmit(self, txn: _ServerTransaction) -> None:
        if txn.retransmit is not None:
            txn.retransmit.cancel()
            txn.retransmit = None
        if txn.ring is not None:
            txn.ring.cancel()

    def _on_ack(self, ack: SipRequest, txn: _ServerTransaction | None) -> None:
        if txn is not None and txn.final_sent and txn.call is None:
            # ACK for a non-2xx final response (same branch): the transaction is done.
            self._stop_retransmit(txn)
            asyncio.get_running_loop().call_later(4 * self.config.t1, self._forget, txn)
            return
        call = self._dialog_of(ack)
        if call is None:
            return
        number, _ = parse_cseq(ack.require("CSeq"))
        for pending in list(self._transactions.values()):
            if pending.call is call and pending.request.method == "INVITE":
                invite_number, _ = parse_cseq(pending.request.require("CSeq"))
                if invite_number == number:
                    self._stop_retransmit(pending)
                    # Keep the transaction a little for INVITE retransmissions in flight.
                    asyncio.get_running_loop().call_later(
                        64 * self.config.t1, self._forget, pending
                    )
        if call.awaiting_answer and not self._take_answer(call, ack):
            self._spawn(self._end_call(call, EndReason.LOCAL_HANGUP, send_bye=True))
            return
        if call.state is CallState.ANSWERED:
            call.state = CallState.CONFIRMED
            self._arm_call_timers(call)
            self._notify(self.handler.on_call_started, call)

    def _take_answer(self, call: Call, ack: SipRequest) -> bool:
        """Apply the SDP answer carried by an ACK; False if there is none we can use."""
        call.awaiting_answer = False
        try:
            answer = self._offer_of(ack)
            if answer is None:
                log.warning("ACK for call %s carries no SDP answer", call.call_id)
                return False
            call.negotiated = negotiate(answer)
        except SdpError as exc:
            log.warning("unusable SDP answer in ACK for call %s: %s", call.call_id, exc)
            return False
        call.media.update(self._media_params(call.negotiated))
        return True

    def _on_reinvite(self, txn: _ServerTransaction) -> None:
        call = self._dialog_of(txn.request)
        if call is None:
            self._respond(txn, 481)
            return
        txn.call = call
        offer = self._offer_of(txn.request)
        try:
            if offer is not None:
                call.negotiated = negotiate(offer)
                call.media.update(self._media_params(call.negotiated))
        except SdpError as exc:
            self._respond_final(txn, 488, call.local_tag, extra=(("Warning", f'304 - "{exc}"'),))
            return
        call.sdp_version += 1
        call.awaiting_answer = offer is None
        call.remote_target = header_uri(txn.request.get("Contact") or f"<{call.remote_target}>")
        body = self._answer(call, offer)
        self._respond_final(
            txn,
            200,
            call.local_tag,
            extra=(self._contact(), _ALLOW, ("Content-Type", "application/sdp")),
            body=body,
        )

    # --- CANCEL, BYE, INFO -----------------------------------------------------------------

    def _on_cancel(self, txn: _ServerTransaction) -> None:
        invite_key = _transaction_key(txn.request).rsplit("|", 1)[0] + "|INVITE"
        invite = self._transactions.get(invite_key)
        if invite is None:
            self._respond(txn, 481, to_tag=_new_tag())
            return
        self._respond(txn, 200, to_tag=invite.call.local_tag if invite.call else _new_tag())
        if invite.final_sent:
            return
        call = invite.call
        if invite.ring is not None:
            invite.ring.cancel()
        tag = call.local_tag if call is not None else _new_tag()
        self._respond_final(invite, 487, tag)
        invite.call = None  # the 487's ACK then matches the transaction, not a dialog
        if call is not None:
            call.state = CallState.ENDED
            call.media.close()
            self._calls.pop((call.call_id, call.local_tag), None)

    def _on_bye(self, txn: _ServerTransaction) -> None:
        call = self._dialog_of(txn.request)
        if call is None:
            self._respond(txn, 481)
            return
        self._respond(txn, 200)
        self._spawn(self._end_call(call, EndReason.REMOTE_BYE, send_bye=False))

    def _on_info(self, txn: _ServerTransaction) -> None:
        call = self._dialog_of(txn.request)
        if call is None:
            self._respond(txn, 481)
            return
        ctype = txn.request.get("Content-Type")
        if ctype is None or not txn.request.body:
            self._respond(txn, 200)  # an empty INFO is a keep-alive probe
            return
        try:
            digit = parse_info_dtmf(ctype, txn.request.body)
        except DtmfParseError as exc:
            log.info("INFO on %s without a usable digit: %s", call.call_id, exc)
            self._respond(txn, 415, extra=(("Accept", "application/dtmf-relay, application/dtmf"),))
            return
        self._respond(txn, 200)
        if call.state is CallState.CONFIRMED:
            self._notify(self.handler.on_dtmf, call, digit)

    # --- call lifetime ---------------------------------------------------------------------

    def _arm_call_timers(self, call: Call) -> None:
        loop = asyncio.get_running_loop()
        call._timers.append(
            loop.call_later(
                self.config.session_timeout, self._timeout, call, EndReason.SESSION_TIMEOUT
            )
        )
        call._timers.append(loop.create_task(self._watch_rtp(call)))

    def _timeout(self, call: Call, reason: EndReason) -> None:
        self._spawn(self._end_call(call, reason, send_bye=True))

    async def _watch_rtp(self, call: Call) -> None:
        loop = asyncio.get_running_loop()
        check = min(1.0, self.config.rtp_timeout / 4)
        while call.state is CallState.CONFIRMED:
            await asyncio.sleep(check)
            if call.negotiated.on_hold:
                call.media.last_received = loop.time()
            elif loop.time() - call.media.last_received > self.config.rtp_timeout:
                self._timeout(call, EndReason.RTP_TIMEOUT)
                return

    def _hangup(self, call: Call) -> None:
        self._spawn(self._end_call(call, EndReason.LOCAL_HANGUP, send_bye=True))

    async def _end_call(self, call: Call, reason: EndReason, *, send_bye: bool) -> None:
        if call.state is CallState.ENDED:
            return
        started = call.state is CallState.CONFIRMED
        answered = call.state in (CallState.ANSWERED, CallState.CONFIRMED)
        call.state = CallState.ENDED
        self._calls.pop((call.call_id, call.local_tag), None)
        for timer in call._timers:
            timer.cancel()
        for txn in list(self._transactions.values()):
            if txn.call is not call:
                continue
            self._stop_retransmit(txn)
            if txn.request.method == "INVITE" and not txn.final_sent:
                # Ended while still ringing (early BYE, shutdown): finish the INVITE too.
                self._respond_final(txn, 487, call.local_tag)
                txn.call = None
        call.media.close()
        if started:
            self._notify(self.handler.on_call_ended, call, reason)
        if send_bye and answered:
            with contextlib.suppress(TimeoutError):
                await self._send_bye(call)

    # --- requests we send ------------------------------------------------------------------

    async def _send_bye(self, call: Call) -> SipResponse:
        """BYE as a non-INVITE client transaction: retransmit until a final response."""
        branch = MAGIC_COOKIE + secrets.token_hex(8)
        call.local_cseq += 1
        headers: list[tuple[str, str]] = [
            ("Via", f"SIP/2.0/UDP {self.config.contact_host}:{self.port};branch={branch};rport"),
            ("Max-Forwards", "70"),
        ]
        headers.extend(("Route", r) for r in call.route_set)
        headers += [
            ("From", f"{call.to_header};tag={call.local_tag}"),
            ("To", call.from_header),
            ("Call-ID", call.call_id),
            ("CSeq", f"{call.local_cseq} BYE"),
            ("User-Agent", self.config.user_agent),
        ]
        bye = SipRequest(tuple(headers), b"", "BYE", call.remote_target).serialise()
        target = self._bye_destination(call)
        loop = asyncio.get_running_loop()
        done: asyncio.Future[SipResponse] = loop.create_future()
        self._client[branch] = done
        try:
            return await asyncio.wait_for(
                self._resend_until(bye, target, done), 64 * self.config.t1
            )
        finally:
            self._client.pop(branch, None)

    async def _resend_until(
        self, data: bytes, target: tuple[str, int], done: asyncio.Future[SipResponse]
    ) -> SipResponse:
        interval = self.config.t1
        while True:
            self._send(data, target)
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(done), interval)
            interval = min(2 * interval, self.config.t2)

    def _bye_destination(self, call: Call) -> tuple[str, int]:
        """First route (loose routing) or the remote target; fall back to where the INVITE came
        from when the URI names a host we would have to resolve."""
        uri = header_uri(call.route_set[0]) if call.route_set else call.remote_target
        return _uri_address(uri) or call.peer

    def _on_response(self, response: SipResponse) -> None:
        branch = header_params(response.require("Via")).get("branch", "")
        done = self._client.get(branch)
        if done is not None and not done.done() and response.status >= 200:
            done.set_result(response)
