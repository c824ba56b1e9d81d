<?xml version="1.0" encoding="UTF-8"?>
<!-- Peer for XML -> JSON: xsltproc turning a tripconv XML export into the JSON tripconv writes
     ({"schemaVersion": ..., "trips": [...]}, one trip per line), strings escaped for JSON.
       xsltproc trips-to-json.xsl IN.xml > OUT.json -->
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:strip-space elements="*"/>

  <xsl:template match="/trips">
    <xsl:text>{"schemaVersion": "</xsl:text><xsl:value-of select="@schemaVersion"/><xsl:text>", "trips": [&#10;</xsl:text>
    <xsl:for-each select="trip">
      <xsl:if test="position() &gt; 1"><xsl:text>,&#10;</xsl:text></xsl:if>
      <xsl:text>{</xsl:text>
      <xsl:for-each select="*">
        <xsl:if test="position() &gt; 1"><xsl:text>, </xsl:text></xsl:if>
        <xsl:text>"</xsl:text><xsl:value-of select="local-name()"/><xsl:text>": </xsl:text>
        <xsl:choose>
          <xsl:when test="self::bucketList">
            <xsl:text>[</xsl:text>
            <xsl:for-each select="*">
              <xsl:if test="position() &gt; 1"><xsl:text>, </xsl:text></xsl:if>
              <xsl:call-template name="object"/>
            </xsl:for-each>
            <xsl:text>]</xsl:text>
          </xsl:when>
          <xsl:when test="*"><xsl:call-template name="object"/></xsl:when>
          <xsl:otherwise><xsl:call-template name="scalar"/></xsl:otherwise>
        </xsl:choose>
      </xsl:for-each>
      <xsl:text>}</xsl:text>
    </xsl:for-each>
    <xsl:text>&#10;]}&#10;</xsl:text>
  </xsl:template>

  <xsl:template name="object">
    <xsl:text>{</xsl:text>
    <xsl:for-each select="*">
      <xsl:if test="position() &gt; 1"><xsl:text>, </xsl:text></xsl:if>
      <xsl:text>"</xsl:text><xsl:value-of select="local-name()"/><xsl:text>": </xsl:text>
      <xsl:call-template name="scalar"/>
    </xsl:for-each>
    <xsl:text>}</xsl:text>
  </xsl:template>

  <xsl:template name="scalar">
    <xsl:choose>
      <xsl:when test="self::hasReservation or self::isInPlan"><xsl:value-of select="."/></xsl:when>
      <xsl:otherwise>
        <xsl:text>"</xsl:text>
        <xsl:call-template name="escape"><xsl:with-param name="s" select="string(.)"/></xsl:call-template>
        <xsl:text>"</xsl:text>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>

  <!-- JSON string escaping: backslash, quote, line feed, carriage return, tab (the only control
       characters XML 1.0 can carry). Fast path when none is present. -->
  <xsl:template name="escape">
    <xsl:param name="s"/>
    <xsl:choose>
      <xsl:when test="not(contains($s, '\') or contains($s, '&quot;') or contains($s, '&#10;') or contains($s, '&#13;') or contains($s, '&#9;'))">
        <xsl:value-of select="$s"/>
      </xsl:when>
      <xsl:otherwise>
        <xsl:variable name="c" select="substring($s, 1, 1)"/>
        <xsl:choose>
          <xsl:when test="$c = '\'">\\</xsl:when>
          <xsl:when test="$c = '&quot;'">\"</xsl:when>
          <xsl:when test="$c = '&#10;'">\n</xsl:when>
          <xsl:when test="$c = '&#13;'">\r</xsl:when>
          <xsl:when test="$c = '&#9;'">\t</xsl:when>
          <xsl:otherwise><xsl:value-of select="$c"/></xsl:otherwise>
        </xsl:choose>
        <xsl:call-template name="escape"><xsl:with-param name="s" select="substring($s, 2)"/></xsl:call-template>
      </xsl:otherwise>
    </xsl:choose>
  </xsl:template>
</xsl:stylesheet>
